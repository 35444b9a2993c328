"""From one harness call to a problem's make_inputs() body and reference() call: constants folded, KBX's random
helpers spelled in plain torch, and only the statements the call's arguments need."""

from __future__ import annotations

import ast
import builtins
import copy
from dataclasses import dataclass, field
from typing import Any

from mkbimport.errors import Unconvertible
from mkbimport.harness_call import CallSite
from mkbimport.kbx_task import TaskFile
from mkbimport.literals import NOTHING, Dtype, bind_constant, fold, to_ast

KBX_HELPERS = {"rand_tensor", "rand_int", "rand_bool"}
DEVICE_STRINGS = {"cuda", "cuda:0"}
DEFAULT_OUTLIER = (0.001, 50.0)  # rand_tensor's own defaults


@dataclass
class Draft:
    statements: list[ast.stmt]  # the body of make_inputs() before its return
    params: list[str]  # the inputs, in order: make_inputs() returns them, reference() takes them
    call: ast.Call  # the task's call inside reference()
    line: int  # the call's line in the task file
    outlier_inputs: list[int] = field(default_factory=list)
    outlier_rate: tuple[float, float] = DEFAULT_OUTLIER
    inplace: list[int] = field(default_factory=list)
    insensitive: list[int] = field(default_factory=list)  # inputs drawn without randomness
    effective: dict[str, Any] = field(default_factory=dict)  # the task's parameters as this call binds them


def _name(text: str) -> ast.Name:
    return ast.Name(text, ast.Load())


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


class _Spell(ast.NodeTransformer):
    """Folds constant names into literals, turns KBX's helpers into torch calls and "cuda" into the device."""

    def __init__(self, env: dict[str, Any]) -> None:
        self.env = env

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if isinstance(node.ctx, ast.Load) and node.id in self.env:
            return to_ast(self.env[node.id])
        return node

    def visit_Constant(self, node: ast.Constant) -> ast.expr:
        return _name("device") if node.value in DEVICE_STRINGS else node

    def visit_Call(self, node: ast.Call) -> ast.expr:
        helper = node.func.id if isinstance(node.func, ast.Name) and node.func.id in KBX_HELPERS else None
        mode = _keyword(node, "mode")
        outlier_dependent = isinstance(mode, ast.Name) and mode.id == "mode"
        mode_value = fold(mode, self.env) if mode is not None else "standard"
        rate = (fold(_keyword(node, "outlier_prob") or ast.Constant(DEFAULT_OUTLIER[0]), self.env),
                fold(_keyword(node, "outlier_scale") or ast.Constant(DEFAULT_OUTLIER[1]), self.env))
        self.generic_visit(node)
        if isinstance(node.func, ast.Attribute) and node.func.attr == "cuda" and not node.args:
            return ast.Call(func=ast.Attribute(node.func.value, "to", ast.Load()), args=[_name("device")],
                            keywords=[])
        if helper is None:
            return node
        shape = node.args[0] if node.args else _keyword(node, "shape")
        if shape is None:
            raise Unconvertible(f"{helper}() without a shape (line {node.lineno})")
        dtype = _keyword(node, "dtype")
        if helper == "rand_bool":
            return _torch("randint", [ast.Constant(0), ast.Constant(2), shape], to_ast(Dtype("bool")))
        if helper == "rand_int":
            low, high = _keyword(node, "low"), _keyword(node, "high")
            if low is None or high is None:
                raise Unconvertible(f"rand_int() without low and high (line {node.lineno})")
            return _torch("randint", [low, high, shape], dtype or to_ast(Dtype("int64")))
        dtype = dtype or to_ast(Dtype("float32"))
        if mode_value == "uniform":
            low = _keyword(node, "low") or ast.Constant(-1.0)
            high = _keyword(node, "high") or ast.Constant(1.0)
            draw = _torch("rand", [shape], dtype)
            width, start = fold(high, self.env), fold(low, self.env)
            span = (to_ast(width - start) if isinstance(width, (int, float)) and isinstance(start, (int, float))
                    else ast.BinOp(high, ast.Sub(), low))
            return ast.BinOp(ast.BinOp(span, ast.Mult(), draw), ast.Add(), low)
        if mode_value not in ("standard", "outlier"):
            raise Unconvertible(f"rand_tensor() with a mode the importer cannot read (line {node.lineno})")
        spelled = _torch("randn", [shape], dtype)
        if outlier_dependent and all(isinstance(v, (int, float)) for v in rate):
            spelled.mkb_outlier = (float(rate[0]), float(rate[1]))  # type: ignore[attr-defined]
        return spelled


def _torch(function: str, args: list[ast.expr], dtype: ast.expr) -> ast.Call:
    return ast.Call(func=ast.Attribute(_name("torch"), function, ast.Load()), args=args,
                    keywords=[ast.keyword("dtype", dtype), ast.keyword("device", _name("device"))])


def _stored(statement: ast.stmt) -> tuple[set[str], set[str]]:
    """(names the statement rebinds whole, names whose object it mutates through a subscript or attribute)."""
    whole: set[str] = set()
    mutated: set[str] = set()
    targets: list[ast.expr] = []
    if isinstance(statement, ast.Assign):
        targets = statement.targets
    elif isinstance(statement, (ast.AugAssign, ast.AnnAssign)):
        targets = [statement.target]
    for target in targets:
        for node in ast.walk(target):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                whole.add(node.id)
            elif isinstance(node, (ast.Subscript, ast.Attribute)) and isinstance(node.ctx, ast.Store):
                root = node.value
                while isinstance(root, (ast.Subscript, ast.Attribute)):
                    root = root.value
                if isinstance(root, ast.Name):
                    mutated.add(root.id)
    if isinstance(statement, ast.AugAssign):
        mutated |= whole
        whole = set()
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
        func = statement.value.func
        if isinstance(func, ast.Attribute) and func.attr.endswith("_") and isinstance(func.value, ast.Name):
            mutated.add(func.value.id)  # x.fill_(0), x.uniform_()
    return whole, mutated


def _loaded(node: ast.AST) -> list[str]:
    local = {n.arg for n in ast.walk(node) if isinstance(n, ast.arg)}
    for comprehension in (n for n in ast.walk(node) if isinstance(n, ast.comprehension)):
        local |= {n.id for n in ast.walk(comprehension.target) if isinstance(n, ast.Name)}
    return [n for n in dict.fromkeys(_names_in_order(node)) if n not in local]


def _names_in_order(node: ast.AST) -> list[str]:
    """The names a node loads, in source order (ast.walk goes breadth first: x.clone() would come after y)."""
    if isinstance(node, ast.Name):
        return [node.id] if isinstance(node.ctx, ast.Load) else []
    return [name for child in ast.iter_child_nodes(node) for name in _names_in_order(child)]


def _method_call_on_variable(call: ast.Call, modules: frozenset[str]) -> bool:
    root = call.func
    if not isinstance(root, ast.Attribute):
        return False
    while isinstance(root, (ast.Attribute, ast.Subscript, ast.Call)):
        root = root.func if isinstance(root, ast.Call) else root.value
    return isinstance(root, ast.Name) and root.id not in modules


def _needs_hoisting(arg: ast.expr, modules: frozenset[str]) -> bool:
    """An argument that draws or computes (torch.sigmoid(x), a helper call) moves into make_inputs(); one that only
    views or copies an input (x.clone(), x.t(), x[0]) stays in the call, as the harness wrote it."""
    for node in ast.walk(arg):
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.GeneratorExp, ast.DictComp, ast.SetComp)):
            return True
        if isinstance(node, ast.Call) and not _method_call_on_variable(node, modules):
            return True
    return False


def build_draft(site: CallSite, task: TaskFile) -> Draft:
    env: dict[str, Any] = {}
    spelled: list[ast.stmt] = []
    for statement in site.prefix:
        if bind_constant(statement, env):
            continue
        rewritten = _Spell(env).visit(copy.deepcopy(statement))
        for name in _stored(statement)[0] | _stored(statement)[1]:
            env.pop(name, None)
        spelled.append(rewritten)
    call = _Spell(env).visit(copy.deepcopy(site.call))
    if not isinstance(call, ast.Call) or any(isinstance(a, ast.Starred) for a in call.args) or any(
            k.arg is None for k in call.keywords):
        raise Unconvertible(f"the harness calls the task with *args or **kwargs (line {site.line})")
    return _assemble(site, task, spelled, call)


def _assemble(site: CallSite, task: TaskFile, spelled: list[ast.stmt], call: ast.Call) -> Draft:
    known = task.module_names | set(dir(builtins)) | {"device"}
    hoisted: list[ast.stmt] = []
    taken = {n for s in spelled for n in _stored(s)[0]} | set(task.module_names)

    def settle(arg: ast.expr, hint: str) -> ast.expr:
        if fold(arg, {}) is not NOTHING or not _needs_hoisting(arg, task.modules):
            return arg
        name = hint if hint.isidentifier() and hint not in taken else f"arg{len(hoisted)}"
        while name in taken:
            name += "_"
        taken.add(name)
        hoisted.append(ast.Assign(targets=[ast.Name(name, ast.Store())], value=arg, lineno=site.line))
        return _name(name)

    call.args = [settle(a, f"arg{i}") for i, a in enumerate(call.args)]
    for keyword in call.keywords:
        keyword.value = settle(keyword.value, keyword.arg or "")
    params = [n for n in _loaded(call) if n not in known]
    if not params:
        raise Unconvertible(f"its call on line {site.line} takes no tensor inputs (the output is made from constants)")
    statements = _slice(spelled + hoisted, set(params))
    _check_bound(statements, params, known, site.line)
    device_of_inputs = ast.Attribute(_name(params[0]), "device", ast.Load())
    call = _DeviceOf(device_of_inputs).visit(call)
    draft = Draft(statements=statements, params=params, call=call, line=site.line)
    _mark_outliers(draft)
    _bind_parameters(draft, task)
    return draft


class _DeviceOf(ast.NodeTransformer):
    """Inside reference() the device is the inputs' own."""

    def __init__(self, replacement: ast.expr) -> None:
        self.replacement = replacement

    def visit_Name(self, node: ast.Name) -> ast.expr:
        return copy.deepcopy(self.replacement) if node.id == "device" else node


def _slice(statements: list[ast.stmt], needed: set[str]) -> list[ast.stmt]:
    kept: list[ast.stmt] = []
    for statement in reversed(statements):
        whole, mutated = _stored(statement)
        if not (whole | mutated) & needed:
            continue
        kept.append(statement)
        needed -= whole
        needed |= set(_loaded(statement)) | mutated
    return list(reversed(kept))


def _check_bound(statements: list[ast.stmt], params: list[str], known: set[str], line: int) -> None:
    bound = set(known)
    for statement in statements:
        for name in _loaded(statement):
            if name not in bound:
                raise Unconvertible(f"its inputs need '{name}' (line {getattr(statement, 'lineno', line)}), which "
                                    f"the harness binds in a way the importer does not follow")
        bound |= _stored(statement)[0]
    for name in params:
        if name not in bound:
            raise Unconvertible(f"its call on line {line} passes '{name}', which the harness binds in a way the "
                                f"importer does not follow")


def _definition(draft: Draft, name: str) -> ast.expr | None:
    for statement in reversed(draft.statements):
        if (isinstance(statement, ast.Assign) and len(statement.targets) == 1
                and isinstance(statement.targets[0], ast.Name) and statement.targets[0].id == name):
            return statement.value
    return None


def _outlier_draw(value: ast.expr | None) -> tuple[float, float] | None:
    """The outlier rate of an input drawn by rand_tensor(mode=mode), alone or shifted/scaled by a constant; a
    draw passed through a function (clamp, sigmoid) is left out, since outliers would break its range."""
    if value is None:
        return None
    if hasattr(value, "mkb_outlier"):
        return value.mkb_outlier  # type: ignore[attr-defined]
    if isinstance(value, ast.BinOp) and isinstance(value.op, (ast.Add, ast.Sub, ast.Mult)):
        for side, other in ((value.left, value.right), (value.right, value.left)):
            if hasattr(side, "mkb_outlier") and fold(other, {}) is not NOTHING:
                return side.mkb_outlier  # type: ignore[attr-defined]
    return None


def _mark_outliers(draft: Draft) -> None:
    for position, name in enumerate(draft.params):
        rate = _outlier_draw(_definition(draft, name))
        if rate is not None:
            if not draft.outlier_inputs:
                draft.outlier_rate = rate
            draft.outlier_inputs.append(position)


def _bind_parameters(draft: Draft, task: TaskFile) -> None:
    """Which task parameter each argument fills, the values in force (the call's, else the defaults) and the inputs
    the call writes in place (an in-place task's first tensor, out=, batch norm's running statistics in training,
    a parameter its body writes), and the inputs no seed changes."""
    function = task.function
    positional = [a.arg for a in function.args.posonlyargs + function.args.args]
    defaults = dict(zip(positional[len(positional) - len(function.args.defaults):], function.args.defaults))
    defaults.update({a.arg: d for a, d in zip(function.args.kwonlyargs, function.args.kw_defaults) if d is not None})
    effective: dict[str, Any] = {name: fold(value, {}) for name, value in defaults.items()}
    bound: dict[str, ast.expr] = {}
    for index, arg in enumerate(draft.call.args):
        if index < len(positional):
            bound[positional[index]] = arg
    for keyword in draft.call.keywords:
        bound[keyword.arg or ""] = keyword.value
    effective.update({name: fold(value, {}) for name, value in bound.items()})
    draft.effective = effective

    def input_position(arg: ast.expr | None) -> int | None:
        return draft.params.index(arg.id) if isinstance(arg, ast.Name) and arg.id in draft.params else None

    written: list[int | None] = [input_position(bound.get(name)) for name in sorted(_written_parameters(function))]
    if function.name.endswith("_") and not function.name.endswith("__"):
        written.append(next((input_position(a) for a in draft.call.args if input_position(a) is not None), None))
    written.append(input_position(bound.get("out")))
    if effective.get("training") is True:
        written += [input_position(bound.get("running_mean")), input_position(bound.get("running_var"))]
    draft.inplace = sorted({p for p in written if p is not None})
    # An input the call writes may be overwritten whole (y.copy_(...)), so its redraw need not show in the output;
    # the grader compares it after the call instead.
    draft.insensitive = [i for i, name in enumerate(draft.params)
                         if i in draft.inplace or not _drawn_at_random(draft.statements, name)]


def _written_parameters(function: ast.FunctionDef) -> set[str]:
    """The task's parameters that its body writes in place (y.copy_(...), x[i] = ...), where it never rebinds them."""
    arguments = function.args
    parameters = {a.arg for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs}
    rebound = {n.id for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    written = set()
    for node in ast.walk(function):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr.endswith("_")
                and not node.func.attr.endswith("__") and isinstance(node.func.value, ast.Name)):
            written.add(node.func.value.id)
        if isinstance(node, (ast.Assign, ast.AugAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
                    written.add(target.value.id)
    return (written & parameters) - rebound


RANDOM_DRAWS = {"randn", "rand", "randint", "randperm", "rand_like", "randn_like", "randint_like", "normal",
                "bernoulli", "multinomial", "uniform_", "normal_", "random_", "exponential_"}


def _drawn_at_random(statements: list[ast.stmt], name: str) -> bool:
    """Whether an input depends on a random draw; one that does not (torch.zeros, torch.ones) is the same whatever
    the seed, so redrawing it cannot change the output (MKB_META "insensitive")."""
    for statement in _slice(statements, {name}):
        for node in ast.walk(statement):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in RANDOM_DRAWS:
                return True
    return False
