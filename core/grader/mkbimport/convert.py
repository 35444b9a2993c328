"""One KernelBench-X task to one problem file: reading it, refusing what the format cannot hold, choosing the call,
and filling MKB_META (category, origin, precision, outliers, quantization thresholds, in-place outputs)."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Any

from mkbimport.draft import Draft, build_draft
from mkbimport.errors import Unconvertible
from mkbimport.harness_call import find_calls
from mkbimport.kbx_checkout import Prompt, TaskRef
from mkbimport.kbx_task import TaskFile, read_task_file
from mkbimport.literals import NOTHING
from mkbimport.problem_text import ProblemText, render
from mkbimport.scaling import Scaling, scale_draft

RANDOM_OPS = {"rand", "randn", "randint", "randperm", "rand_like", "randn_like", "randint_like", "bernoulli",
              "multinomial", "normal", "poisson", "uniform_", "normal_", "exponential_", "geometric_", "cauchy_",
              "log_normal_", "random_", "bernoulli_", "fractional_max_pool2d", "fractional_max_pool3d", "rrelu",
              "gumbel_softmax", "Dropout", "Dropout2d", "Dropout3d", "AlphaDropout"}
DROPOUTS = {"dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout"}
NAME_PRECISIONS = ("fp16", "bf16", "int8", "w8a8", "w4a16")
DTYPE_PRECISIONS = {"float32": "fp32", "float": "fp32", "float16": "fp16", "half": "fp16", "bfloat16": "bf16",
                    "int8": "int8"}
QUANT_PATTERNS = {"min_cosine": r"cosine_sim\w*\s*>=\s*([0-9]+(?:\.[0-9]+)?)",
                  "max_relative_l1": r"l1_rel\w*\s*<=\s*([0-9]+(?:\.[0-9]+)?)",
                  "max_rmse": r"rmse\s*<=\s*([0-9]+(?:\.[0-9]+)?)"}


@dataclass(frozen=True)
class Converted:
    text: str
    scaling: Scaling
    draft_line: int


def _called(node: ast.Call) -> str:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _value(expr: ast.expr | None, draft: Draft) -> Any:
    if expr is None:
        return NOTHING
    if isinstance(expr, ast.Constant):
        return expr.value
    if isinstance(expr, ast.Name):
        return draft.effective.get(expr.id, NOTHING)
    return NOTHING


def _random_use(task: TaskFile, draft: Draft) -> str:
    """The random operation the task's function runs with this call's arguments; "" when it runs none."""
    for node in (n for statement in task.section_tree for n in ast.walk(statement) if isinstance(n, ast.Call)):
        name = _called(node)
        if name in DROPOUTS:
            keywords = {k.arg: k.value for k in node.keywords}
            p = _value(keywords.get("p", node.args[1] if len(node.args) > 1 else None), draft)
            training = _value(keywords.get("training", keywords.get("train",
                                                                    node.args[2] if len(node.args) > 2 else None)),
                              draft)
            if training is NOTHING and "training" not in keywords and len(node.args) <= 2:
                training = True  # F.dropout trains unless told otherwise
            if training is False or p == 0 or p == 0.0:
                continue
            return f"{name} in training mode"
        if name in RANDOM_OPS:
            return name
    return ""


def _precision(task: TaskRef, draft: Draft) -> str:
    for suffix in NAME_PRECISIONS:
        if task.name.lower().endswith("_" + suffix):
            return suffix
    for statement in draft.statements:
        for node in ast.walk(statement):
            if isinstance(node, ast.keyword) and node.arg == "dtype" and isinstance(node.value, ast.Attribute):
                return DTYPE_PRECISIONS.get(node.value.attr, "")
    floating_draws = [n for s in draft.statements for n in ast.walk(s)
                      if isinstance(n, ast.Attribute) and n.attr in ("randn", "rand")]
    return "fp32" if floating_draws else ""  # torch draws float32 unless told otherwise


def _quant_thresholds(task: TaskFile) -> dict[str, float]:
    text = ast.get_docstring(task.function) or ""
    found = {}
    for key, pattern in QUANT_PATTERNS.items():
        match = re.search(pattern, text)
        if match:
            found[key] = float(match.group(1))
    return found


def _scale(draft: Draft, task: TaskFile) -> Scaling:
    nodes = [n for statement in task.section_tree for n in ast.walk(statement)]
    called = {_called(n) for n in nodes if isinstance(n, ast.Call)}
    matmul_operator = any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.MatMult) for n in nodes)
    constants = {n.value for n in nodes if isinstance(n, ast.Constant) and type(n.value) is int}
    return scale_draft(draft, called, matmul_operator, constants)


def _choose(task: TaskFile) -> tuple[Draft, Scaling]:
    calls = find_calls(task.harness, task.function.name)
    if not calls.sites:
        raise Unconvertible(f"its harness {task.harness.name}() never reaches a call of {task.function.name}()")
    if calls.mode_loop_line:
        sites = [s for s in calls.sites if s.in_mode_loop]
        if not sites:
            raise Unconvertible(f"its mode loop (line {calls.mode_loop_line}) calls {task.function.name}() only in "
                                f"ways the importer does not follow")
        draft = build_draft(sites[0], task)
        return draft, _scale(draft, task)
    best: tuple[Draft, Scaling] | None = None  # no mode loop: the call that draws the most random elements
    reasons = []
    for site in calls.sites:
        try:
            draft = build_draft(site, task)
        except Unconvertible as why:
            reasons.append(str(why))
            continue
        scaling = _scale(draft, task)
        if scaling.random_numel and (best is None or scaling.random_numel > best[1].random_numel):
            best = (draft, scaling)
    if best is None:
        raise Unconvertible(reasons[0] if reasons else "its harness draws no random tensors (every call takes "
                                                       "literal tensors or none)")
    return best


def _prompt_of(ref: TaskRef, task: TaskFile, prompts: dict[str, Prompt]) -> Prompt | None:
    """KBX's prompt file names a task by its function ("torch.div", "adamw_step"); a precision variant such as
    mul_fp16 shares its base task's prompt."""
    base = re.sub(r"_(fp16|bf16)$", "", ref.name)
    for name in (ref.name, task.function.name, base):
        if name in prompts:
            return prompts[name]
    return None


def convert_task(ref: TaskRef, prompts: dict[str, Prompt]) -> Converted:
    """Raises TaskFileError for a malformed file, Unconvertible with the reason for a task the format cannot hold."""
    if not ref.family:
        raise Unconvertible(f"category '{ref.category}' is not one of KernelBench-X's fifteen")
    task = read_task_file(ref.path)
    prompt = _prompt_of(ref, task, prompts)
    section_source = "\n".join(task.section)
    if "torch.optim." in section_source:
        raise Unconvertible("returns a torch.optim optimizer object, not tensors to compare")
    draft, scaling = _choose(task)
    randomness = _random_use(task, draft)
    if randomness:
        raise Unconvertible(f"draws random numbers inside the task ({randomness}), so no reference can match it")
    meta: dict[str, Any] = {"category": ref.category, "origin": f"kernelbenchx:{ref.category}/{ref.name}"}
    precision = _precision(ref, draft)
    if precision:
        meta["precision"] = precision
    meta["outliers"] = ({"inputs": draft.outlier_inputs, "p": draft.outlier_rate[0], "scale": draft.outlier_rate[1]}
                        if draft.outlier_inputs else False)
    thresholds = _quant_thresholds(task)
    if thresholds:
        meta["quant"] = thresholds
    if draft.inplace:
        meta["inplace_outputs"] = draft.inplace
    if draft.insensitive:
        meta["insensitive"] = draft.insensitive
    description = prompt.description if prompt else ""
    docstring = ast.get_docstring(task.function) or ""
    summary = (description or docstring).split("\n\n")[0]
    summary = re.split(r"(?<=\.)\s", " ".join(summary.split()), maxsplit=1)[0]
    title = f"KernelBench-X {ref.label}: " + (summary or task.function.name)
    title = title if len(title) <= 200 else title[:197].rstrip() + "..."
    outlier_note = "" if draft.outlier_inputs else " Outlier draws are off (no input is a plain outlier-mode draw)."
    text = render(ProblemText(title=title, origin_file=f"{ref.label}.py", description=description,
                              signature=prompt.signature if prompt else "", sizes_note=scaling.note + "." + outlier_note,
                              meta=meta, imports=task.imports, section=task.section, draft=draft))
    return Converted(text=text, scaling=scaling, draft_line=draft.line)
