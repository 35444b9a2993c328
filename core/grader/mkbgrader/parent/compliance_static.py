"""Static compliance of kernel.py against its DSL descriptor: size limit, forbidden imports and patterns, kernel markers."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class StaticFinding:
    rule: str     # "size", "syntax", "forbidden_import", "forbidden_pattern", "no_kernel"
    detail: str   # one line naming what was found and where


def strip_comments(source: str) -> str:
    """The source without comments (strings stay: CUDA C++ lives in string literals)."""
    try:
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type != tokenize.COMMENT]
        return tokenize.untokenize(tokens)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return source


def _imported_modules(tree: ast.AST) -> list[tuple[str, int]]:
    found: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.module, node.lineno))
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            if name in ("__import__", "import_module") and isinstance(node.args[0].value, str):
                found.append((node.args[0].value, node.lineno))
    return found


def _matches_module(module: str, forbidden: str) -> bool:
    return module == forbidden or module.startswith(forbidden + ".")


def check_source(source: str, descriptor: dict, max_bytes: int) -> Optional[StaticFinding]:
    """The first static rule kernel.py breaks, or None when it passes."""
    size = len(source.encode("utf-8"))
    if size > max_bytes:
        return StaticFinding("size", f"kernel.py is {size} bytes; the limit is {max_bytes} bytes")
    try:
        tree = ast.parse(source)
    except SyntaxError as error:
        return StaticFinding("syntax", f"kernel.py does not parse: line {error.lineno}: {error.msg}")
    compliance = descriptor.get("compliance", {}) if isinstance(descriptor, dict) else {}
    for module, line in _imported_modules(tree):
        for forbidden in compliance.get("forbidden_imports", []):
            if _matches_module(module, forbidden):
                return StaticFinding("forbidden_import",
                                     f"kernel.py line {line} imports {module}, which this DSL forbids")
    code = strip_comments(source)
    for pattern in compliance.get("forbidden_patterns", []):
        match = re.search(pattern, code, re.MULTILINE)
        if match:
            line = code.count("\n", 0, match.start()) + 1
            return StaticFinding("forbidden_pattern",
                                 f"kernel.py line {line} contains '{match.group(0)}' (forbidden pattern {pattern!r})")
    markers = compliance.get("kernel_markers", [])
    if markers and not any(re.search(marker, code, re.MULTILINE) for marker in markers):
        dsl = descriptor.get("id", "the DSL")
        return StaticFinding("no_kernel", f"kernel.py defines no {dsl} kernel (none of {markers} found)")
    return None
