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


def render(problem: ProblemText) -> str:
    draft = problem.draft
    lines = [f'"""{one_line_title(problem.title)}"""', ""]
    lines.append(f"# Imported from KernelBench-X ({problem.origin_file}) by `mkb suite import kernelbenchx`; "
                 f"re-import rather than edit.")
    lines.append(f"# The task section is KBX's own; make_inputs() is its harness's first standard-mode call "
                 f"(line {draft.line}).")
    lines += _comment("Task", problem.description)
    lines += _comment("Signature", problem.signature)
    lines += _comment("Sizes", problem.sizes_note)
    lines.append("")
    imports = list(problem.imports) if "import torch" in problem.imports else ["import torch", *problem.imports]
    lines += imports
    lines += ["", "MKB_META = {"]
    lines += [f"    {json.dumps(key)}: {_literal(value)}," for key, value in problem.meta.items()]
    lines += ["}", "", ""]
    for statement in problem.section:
        lines += [statement, "", ""]
    lines.append('def make_inputs(device="cuda"):')
    lines += [textwrap.indent(ast.unparse(statement), "    ") for statement in draft.statements]
    lines.append(f"    return [{', '.join(draft.params)}]")
    lines += ["", "", f"def reference({', '.join(draft.params)}):", f"    return {ast.unparse(draft.call)}", ""]
    return "\n".join(lines)
