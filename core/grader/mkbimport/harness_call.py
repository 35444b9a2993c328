"""Finding the calls of the task in its harness, each with the statements that run before it on the first pass."""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass, field

from mkbimport.literals import NOTHING, constants_of, fold


@dataclass
class CallSite:
    call: ast.Call
    prefix: list[ast.stmt]  # what runs before the call, loops unrolled to their first iteration
    in_mode_loop: bool  # inside `for mode in ("standard", "outlier")`, with mode bound to "standard"
    line: int


@dataclass
class HarnessCalls:
    sites: list[CallSite] = field(default_factory=list)
    mode_loop_line: int = 0  # 0: the harness has no mode loop
    outlier_mode: bool = False  # the mode loop also runs "outlier"


def _strings(node: ast.expr) -> list[str] | None:
    if isinstance(node, (ast.Tuple, ast.List)) and all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
        return [e.value for e in node.elts]
    return None


def _is_mode_loop(loop: ast.For) -> bool:
    values = _strings(loop.iter)
    return isinstance(loop.target, ast.Name) and loop.target.id == "mode" and bool(values) and "standard" in values


def _assign(target: ast.expr, value: ast.expr, line: int) -> ast.Assign:
    node = ast.Assign(targets=[copy.deepcopy(target)], value=copy.deepcopy(value), lineno=line)
    return ast.fix_missing_locations(node)


def _first_value(loop: ast.For, prefix: list[ast.stmt]) -> ast.expr | None:
    """The loop variable's value on the first iteration, where the harness spells it out; None otherwise."""
    iterable = loop.iter
    if isinstance(iterable, ast.Name):  # `for shape in shapes` with shapes = (...) earlier
        for statement in reversed(prefix):
            if (isinstance(statement, ast.Assign) and len(statement.targets) == 1
                    and isinstance(statement.targets[0], ast.Name) and statement.targets[0].id == iterable.id):
                iterable = statement.value
                break
    if isinstance(iterable, (ast.Tuple, ast.List)) and iterable.elts:
        return iterable.elts[0]
    if (isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and iterable.func.id == "range"
            and iterable.args and all(isinstance(a, ast.Constant) and isinstance(a.value, int) for a in iterable.args)):
        bounds = [a.value for a in iterable.args]
        start, stop = (0, bounds[0]) if len(bounds) == 1 else (bounds[0], bounds[1])
        return ast.Constant(start) if stop > start else None
    return None


def _task_calls(statement: ast.stmt, task_name: str) -> list[ast.Call]:
    return [n for n in ast.walk(statement)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == task_name]


def find_calls(harness: ast.FunctionDef, task_name: str) -> HarnessCalls:
    found = HarnessCalls()

    def walk(statements: list[ast.stmt], prefix: list[ast.stmt], in_mode: bool) -> list[ast.stmt]:
        prefix = list(prefix)
        for statement in statements:
            if isinstance(statement, ast.For):
                if _is_mode_loop(statement) and not found.mode_loop_line:
                    found.mode_loop_line = statement.lineno
                    found.outlier_mode = "outlier" in (_strings(statement.iter) or [])
                    bind = _assign(statement.target, ast.Constant("standard"), statement.lineno)
                    walk(statement.body, prefix + [bind], True)
                    continue
                first = _first_value(statement, prefix)
                if first is not None:
                    walk(statement.body, prefix + [_assign(statement.target, first, statement.lineno)], in_mode)
                continue  # a loop's own bindings stay inside it
            if isinstance(statement, (ast.With, ast.Try)):
                prefix = walk(statement.body, prefix, in_mode)
                continue
            if isinstance(statement, ast.If):  # followed where its test is a constant (mode == "standard")
                test = fold(statement.test, constants_of(prefix))
                if test is not NOTHING:
                    prefix = walk(statement.body if test else statement.orelse, prefix, in_mode)
                continue
            if isinstance(statement, (ast.While, ast.FunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)):
                continue  # conditions are not evaluated; imports were hoisted with the task's own
            for call in _task_calls(statement, task_name)[:1]:
                found.sites.append(CallSite(call=call, prefix=list(prefix), in_mode_loop=in_mode,
                                            line=statement.lineno))
            prefix.append(statement)
        return prefix

    walk(harness.body, [], False)
    return found
