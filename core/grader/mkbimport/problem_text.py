"""Writing a converted task as problem-file text: docstring, provenance comments, MKB_META, the task section,
make_inputs() and reference()."""

from __future__ import annotations

import ast
import json
import textwrap
from dataclasses import dataclass
from typing import Any

from mkbimport.draft import Draft


@dataclass(frozen=True)
class ProblemText:
    title: str
    origin_file: str  # "<Category>/<name>.py", as KBX lays it out
    description: str
    signature: str
    sizes_note: str
    meta: dict[str, Any]
    imports: tuple[str, ...]
    section: tuple[str, ...]
    draft: Draft


def _literal(value: Any) -> str:
    """A Python literal that the catalog's MKB_META reader accepts (it never runs the file)."""
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_literal(v) for v in value) + "]"
    return "{" + ", ".join(f"{json.dumps(k)}: {_literal(v)}" for k, v in value.items()) + "}"


def _comment(label: str, text: str) -> list[str]:
    if not text:
        return []
    wrapped = textwrap.wrap(" ".join(text.split()), width=114)
    return [f"# {label}:"] + [f"#   {line}" for line in wrapped]


def one_line_title(text: str) -> str:
    title = " ".join(text.split()).replace("\\", "/").replace('"""', "'''")
    return title.rstrip('"') or "KernelBench-X task"


# Creators of uninitialised memory and their zero-filled twins: an output buffer a harness allocates with
# torch.empty would differ between two draws of one seed, so make_inputs would not be deterministic.
UNINITIALISED = {"empty": "zeros", "empty_like": "zeros_like", "new_empty": "new_zeros", "empty_strided": "zeros"}


class _ZeroFilled(ast.NodeTransformer):
    def __init__(self) -> None:
        self.replaced = 0

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        function = node.func
        if isinstance(function, ast.Attribute) and function.attr in UNINITIALISED:
            if function.attr == "empty_strided" and len(node.args) >= 2:
                node.args = node.args[:1]  # zeros takes the size alone; the strides only lay out the memory
            function.attr = UNINITIALISED[function.attr]
            self.replaced += 1
        return node


def zero_filled(statements: list[ast.stmt]) -> tuple[list[ast.stmt], int]:
    """The statements with every torch.empty-like creator made its zeros twin, and how many were replaced."""
    transformer = _ZeroFilled()
    rewritten = [transformer.visit(ast.parse(ast.unparse(statement)).body[0]) for statement in statements]
    return rewritten, transformer.replaced


def render(problem: ProblemText) -> str:
    draft = problem.draft
    statements, replaced = zero_filled(list(draft.statements))
    lines = [f'"""{one_line_title(problem.title)}"""', ""]
    lines.append(f"# Imported from KernelBench-X ({problem.origin_file}) by `mkb suite import kernelbenchx`; "
                 f"re-import rather than edit.")
    lines.append(f"# The task section is KBX's own; make_inputs() is its harness's first standard-mode call "
                 f"(line {draft.line}).")
    lines += _comment("Task", problem.description)
    lines += _comment("Signature", problem.signature)
    lines += _comment("Sizes", problem.sizes_note)
    if replaced:
        lines.append(f"# make_inputs: {replaced} torch.empty-like allocation(s) became zero-filled, so that one seed "
                     f"gives one draw.")
    lines.append("")
    imports = list(problem.imports) if "import torch" in problem.imports else ["import torch", *problem.imports]
    lines += imports
    lines += ["", "MKB_META = {"]
    lines += [f"    {json.dumps(key)}: {_literal(value)}," for key, value in problem.meta.items()]
    lines += ["}", "", ""]
    for statement in problem.section:
        lines += [statement, "", ""]
    lines.append('def make_inputs(device="cuda"):')
    lines += [textwrap.indent(ast.unparse(statement), "    ") for statement in statements]
    lines.append(f"    return [{', '.join(draft.params)}]")
    lines += ["", "", f"def reference({', '.join(draft.params)}):", f"    return {ast.unparse(draft.call)}", ""]
    return "\n".join(lines)
