"""One KernelBench-X task file read as a syntax tree: its task section (the function under test), and its harness."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from mkbimport.errors import TaskFileError, Unconvertible

# Imports that only the harness needs (its path juggling and KBX's random-tensor helpers).
HARNESS_ONLY_MODULES = {"sys", "os", "data_utils", "utils", "utils.data_utils"}
# Names a generated problem defines itself; a task section that defines one cannot be kept verbatim.
RESERVED_NAMES = {"reference", "make_inputs", "MKB_META", "device"}


@dataclass(frozen=True)
class TaskFile:
    path: Path
    stem: str
    text: str
    imports: tuple[str, ...]  # each import statement as source, deduplicated, in order of first appearance
    section: tuple[str, ...]  # the task section's other top-level statements, verbatim
    module_names: frozenset[str]  # names bound at module level in the generated file (imports, defs, globals)
    modules: frozenset[str]  # the names that stand for imported modules (torch, F, math)
    function: ast.FunctionDef  # the task's function
    harness: ast.FunctionDef  # test_<name>()
    section_tree: tuple[ast.stmt, ...]  # the task section's statements, for the analyses that read them


def _import_modules(node: ast.stmt) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        return [node.module or ""]
    return []


def _harness_only(node: ast.stmt) -> bool:
    """Statements that serve only KBX's own harness: its imports, sys.path edits and the `test_results = ...` run."""
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return all(name.split(".")[0] in HARNESS_ONLY_MODULES or name in HARNESS_ONLY_MODULES
                   for name in _import_modules(node))
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        return "sys.path" in ast.unparse(node.value.func)
    if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name):
        return node.value.func.id.startswith("test_")
    if isinstance(node, ast.If) and "__name__" in ast.unparse(node.test):
        return True
    return False


def _bound_names(node: ast.stmt) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.asname or alias.name.split(".")[0] for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        return [alias.asname or alias.name for alias in node.names]
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
    return []


def _called_names(function: ast.FunctionDef) -> list[str]:
    return [n.func.id for n in ast.walk(function) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]


def read_task_file(path: Path) -> TaskFile:
    """Parses `path` without running it. Raises TaskFileError for a malformed file, Unconvertible for a task whose
    section cannot be kept as it is."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise TaskFileError(path, 1, f"is not UTF-8 text ({error.reason} at byte {error.start})") from None
    except OSError as error:
        raise TaskFileError(path, 1, f"cannot be read ({error.strerror})") from None
    try:
        tree = ast.parse(text, filename=str(path))
    except SyntaxError as error:
        raise TaskFileError(path, error.lineno or 1, f"does not parse as Python: {error.msg}") from None
    lines = text.splitlines()
    harnesses = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")]
    if not harnesses:
        raise TaskFileError(path, 1, "has no test_*() harness function at module level (KernelBench-X's tasks end "
                                     "with one that draws the inputs)")
    harness = harnesses[0]
    imports: list[str] = []
    section: list[str] = []
    section_tree: list[ast.stmt] = []
    module_names: set[str] = set()
    modules: set[str] = set()

    def keep_import(node: ast.Import | ast.ImportFrom) -> None:
        statement = ast.unparse(node)
        if statement not in imports:
            imports.append(statement)
        module_names.update(_bound_names(node))
        if isinstance(node, ast.Import):
            modules.update(_bound_names(node))

    for node in tree.body:
        if node in harnesses or _harness_only(node):
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            keep_import(node)
            continue
        start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        section.append("\n".join(lines[start - 1:node.end_lineno]))
        section_tree.append(node)
        module_names.update(_bound_names(node))
    for node in ast.walk(harness):  # imports inside the harness are hoisted beside the task's own
        if isinstance(node, (ast.Import, ast.ImportFrom)) and not _harness_only(node):
            keep_import(node)
    functions = {n.name: n for n in section_tree if isinstance(n, ast.FunctionDef)}
    called = _called_names(harness)
    function = functions.get(path.stem)
    if function is None or function.name not in called:
        function = next((functions[name] for name in called if name in functions), None)
    if function is None:
        raise TaskFileError(path, harness.lineno, f"its harness {harness.name}() calls no function that the task "
                                                  f"section defines (expected {path.stem}())")
    clash = sorted(module_names & RESERVED_NAMES)
    if clash:
        raise Unconvertible(f"the task section defines {', '.join(clash)}, a name the problem format reserves")
    return TaskFile(path=path, stem=path.stem, text=text, imports=tuple(imports), section=tuple(section),
                    module_names=frozenset(module_names), modules=frozenset(modules | {"torch"}), function=function,
                    harness=harness, section_tree=tuple(section_tree))
