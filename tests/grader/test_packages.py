"""The grader's two packages, one per process (DESIGN §5.2, §5.4), checked by parsing their sources: the parent
imports no torch, DSL or child module; the child imports torch at the top; a function-local import is only for an
optional package; no import circle; no private name used across modules."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import tempfile
import unittest
from typing import Optional

import gradertest

PACKAGE = "mkbgrader"
PARENT = "mkbgrader.parent"
CHILD = "mkbgrader.child"
# What the parent process must never import itself: torch, the DSLs, and the child package.
HEAVY = ("torch", "triton", "numba", "jax", "cupy", "cutlass", "tvm", "numpy", "mkb_cuda", CHILD)
# Packages a child module may import inside a function, because they may be absent: the DSLs (and the grader's own
# warm-up kernels, modules that import triton, jax or numba), NVML and cuda-python for the clocks.
OPTIONAL = ("triton", "numba", "jax", "cupy", "cutlass", "tvm", "numpy", "mkb_cuda", "pynvml", "cuda",
            "mkbgrader.child.warmup_triton", "mkbgrader.child.warmup_pallas", "mkbgrader.child.warmup_numba")
# The one parent module that names child modules, by string (parent/child_task.py).
CHILD_DOOR = "mkbgrader.parent.child_task"


def _within(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


class Module:
    """One source file of the package: its dotted name, its tree and its imports (name, line, inside a function)."""

    def __init__(self, root: str, path: str) -> None:
        relative = os.path.relpath(path, root)[:-3].split(os.sep)
        self.is_package = relative[-1] == "__init__"
        self.name = ".".join(relative[:-1] if self.is_package else relative)
        self.path = os.path.relpath(path, root)
        with open(path, encoding="utf-8") as handle:
            self.tree = ast.parse(handle.read(), path)
        self.imports: list[tuple[str, int, bool, list[str]]] = []  # (module, line, in a function, names taken)
        self._collect(self.tree, False)

    def _absolute(self, node: ast.ImportFrom) -> str:
        if not node.level:
            return node.module or ""
        base = self.name.split(".") if self.is_package else self.name.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        return ".".join(base + ([node.module] if node.module else []))

    def _collect(self, node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import):
                for alias in child.names:
                    self.imports.append((alias.name, child.lineno, in_function, []))
            elif isinstance(child, ast.ImportFrom):
                self.imports.append((self._absolute(child), child.lineno, in_function, [a.name for a in child.names]))
            self._collect(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                   ast.Lambda)))

    @property
    def in_parent(self) -> bool:
        """The parent's side: the parent package and the modules at the package's root (entry point, fingerprint)."""
        return not _within(self.name, (CHILD,))


def load_modules(root: str) -> dict[str, Module]:
    modules = {}
    for folder, dirs, names in os.walk(os.path.join(root, PACKAGE)):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(names):
            if name.endswith(".py"):
                module = Module(root, os.path.join(folder, name))
                modules[module.name] = module
    return modules


def imported_modules(module: Module, modules: dict[str, Module]) -> list[tuple[str, int, bool]]:
    """The package's modules that `module` imports: `from a import b` names module a.b when there is one."""
    found = []
    for name, line, in_function, taken in module.imports:
        targets = [f"{name}.{t}" for t in taken if f"{name}.{t}" in modules]
        if not targets and name in modules:
            targets = [name]
        found.extend((target, line, in_function) for target in targets)
    return found


def process_rule_violations(modules: dict[str, Module]) -> list[str]:
    found = []
    for module in modules.values():
        for name, line, in_function, taken in module.imports:
            where = f"{module.path}:{line}"
            names = [name] + [f"{name}.{t}" for t in taken]
            if module.in_parent and any(_within(n, HEAVY) for n in names):
                found.append(f"{where}: the parent imports {name}; only the child package may (name the work with "
                             "child_task.ChildTask instead)")
            elif not module.in_parent and in_function and _within(name, ("torch",)):
                found.append(f"{where}: a child module imports {name} inside a function; import torch at the top")
            elif in_function and not _within(name, OPTIONAL):
                found.append(f"{where}: {name} is imported inside a function; import it at the top (only optional "
                             f"packages, {', '.join(OPTIONAL)}, may be imported where they are used)")
        if module.in_parent and module.name != CHILD_DOOR:
            for node in ast.walk(module.tree):
                if isinstance(node, ast.Attribute) and node.attr == "import_module":
                    found.append(f"{module.path}:{node.lineno}: the parent imports a module by name outside "
                                 f"{CHILD_DOOR}")
    return found


def import_circles(modules: dict[str, Module]) -> list[str]:
    """Every import circle among the package's modules, each as "a → b → a" (imports inside functions count)."""
    edges = {name: sorted({t for t, _, _ in imported_modules(m, modules) if t != name}) for name, m in modules.items()}
    circles: list[str] = []
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    path: list[str] = []

    def visit(name: str) -> None:
        state[name] = 1
        path.append(name)
        for target in edges.get(name, []):
            if state.get(target) == 1:
                circles.append(" → ".join(path[path.index(target):] + [target]))
            elif target not in state:
                visit(target)
        path.pop()
        state[name] = 2

    for name in sorted(modules):
        if name not in state:
            visit(name)
    return circles


def private_names_across_modules(modules: dict[str, Module]) -> list[str]:
    """`from m import _x`, and `alias._x` where alias is a package module bound by an import."""
    found = []
    for module in modules.values():
        aliases: dict[str, str] = {}
        for node in ast.walk(module.tree):
            if isinstance(node, ast.ImportFrom):
                source = module._absolute(node)
                for alias in node.names:
                    target = f"{source}.{alias.name}"
                    if target in modules:
                        aliases[alias.asname or alias.name] = target
                    elif _within(source, (PACKAGE,)) and alias.name.startswith("_") and not alias.name.startswith("__"):
                        found.append(f"{module.path}:{node.lineno}: imports the private name {alias.name} of "
                                     f"{source}")
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name in modules and alias.asname:
                        aliases[alias.asname] = alias.name
        for node in ast.walk(module.tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases \
                    and node.attr.startswith("_") and not node.attr.startswith("__"):
                found.append(f"{module.path}:{node.lineno}: uses the private name {node.attr} of "
                             f"{aliases[node.value.id]}")
    return found


def all_findings(root: str) -> list[str]:
    modules = load_modules(root)
    return process_rule_violations(modules) + [f"import circle: {c}" for c in import_circles(modules)] + \
        private_names_across_modules(modules)


class GraderPackages(unittest.TestCase):
    def test_the_grader_keeps_torch_out_of_the_parent_and_has_no_circle_or_private_name_across_modules(self) -> None:
        found = all_findings(gradertest.GRADER)
        self.assertEqual(found, [], "\n" + "\n".join(found))

    def test_both_packages_exist_and_the_child_modules_import_torch_at_the_top(self) -> None:
        modules = load_modules(gradertest.GRADER)
        self.assertIn("mkbgrader.parent.server", modules)
        self.assertIn("mkbgrader.child.evaluate", modules)
        for name in ("evaluate", "retime", "validate", "timing", "memory", "warmup", "draws", "compare"):
            module = modules[f"{CHILD}.{name}"]
            self.assertIn(("torch", False), [(n, f) for n, _, f, _ in module.imports], name)

    def test_every_parent_module_imports_with_torch_blocked(self) -> None:
        modules = sorted(n for n, m in load_modules(gradertest.GRADER).items()
                         if m.in_parent and n != "mkbgrader.__main__")
        script = ("import sys\n"
                  "for name in " + repr(HEAVY[:-1]) + ": sys.modules[name] = None\n"  # any import of them fails
                  "import importlib\n"
                  "for name in " + repr(modules) + ": importlib.import_module(name)\n"
                  "loaded = sorted(n for n in sys.modules if n.startswith('mkbgrader.child'))\n"
                  "print(loaded)\n")
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                              env={**os.environ, "PYTHONPATH": gradertest.GRADER})
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout.strip(), "[]", "a parent module loaded the child package")


class RulesOnSmallTrees(unittest.TestCase):
    """Each rule fails on a tree that breaks it, so the test above can fail."""

    def tree(self, files: dict[str, str]) -> str:
        folder = tempfile.mkdtemp()
        self.addCleanup(lambda: __import__("shutil").rmtree(folder))
        for path, text in {"mkbgrader/__init__.py": "", "mkbgrader/parent/__init__.py": "",
                           "mkbgrader/child/__init__.py": "", **files}.items():
            os.makedirs(os.path.dirname(os.path.join(folder, path)), exist_ok=True)
            with open(os.path.join(folder, path), "w", encoding="utf-8") as handle:
                handle.write(text)
        return folder

    def one(self, files: dict[str, str]) -> Optional[str]:
        found = all_findings(self.tree(files))
        self.assertEqual(len(found), 1, found)
        return found[0]

    def test_torch_in_the_parent_is_reported_at_the_top_and_inside_a_function(self) -> None:
        self.assertIn("the parent imports torch", self.one({"mkbgrader/parent/a.py": "import torch\n"}))
        self.assertIn("the parent imports torch.cuda",
                      self.one({"mkbgrader/parent/a.py": "def f():\n    import torch.cuda\n"}))

    def test_the_child_package_imported_by_the_parent_is_reported(self) -> None:
        finding = self.one({"mkbgrader/parent/a.py": "from mkbgrader.child import evaluate\n",
                            "mkbgrader/child/evaluate.py": "import torch\n"})
        self.assertIn("parent/a.py:1: the parent imports mkbgrader.child", finding)

    def test_an_import_by_name_outside_the_child_door_is_reported(self) -> None:
        finding = self.one({"mkbgrader/parent/a.py": "import importlib\nimportlib.import_module('x')\n"})
        self.assertIn("imports a module by name", finding)

    def test_torch_inside_a_child_function_is_reported_and_a_dsl_there_is_not(self) -> None:
        self.assertIn("import torch at the top", self.one({"mkbgrader/child/a.py": "def f():\n    import torch\n"}))
        self.assertEqual(all_findings(self.tree({"mkbgrader/child/a.py": "def f():\n    import triton\n"})), [])

    def test_a_grader_module_imported_inside_a_function_is_reported(self) -> None:
        finding = self.one({"mkbgrader/parent/a.py": "def f():\n    from mkbgrader.parent import b\n",
                            "mkbgrader/parent/b.py": ""})
        self.assertIn("mkbgrader.parent is imported inside a function", finding)

    def test_an_import_circle_is_reported(self) -> None:
        finding = self.one({"mkbgrader/parent/a.py": "from mkbgrader.parent import b\n",
                            "mkbgrader/parent/b.py": "from mkbgrader.parent.a import x\n"})
        self.assertEqual(finding, "import circle: mkbgrader.parent.a → mkbgrader.parent.b → mkbgrader.parent.a")

    def test_a_private_name_across_modules_is_reported_both_ways(self) -> None:
        self.assertIn("imports the private name _x of mkbgrader.parent.b",
                      self.one({"mkbgrader/parent/a.py": "from mkbgrader.parent.b import _x\n",
                                "mkbgrader/parent/b.py": "_x = 1\n"}))
        self.assertIn("uses the private name _x of mkbgrader.parent.b",
                      self.one({"mkbgrader/parent/a.py": "from mkbgrader.parent import b\ny = b._x\n",
                                "mkbgrader/parent/b.py": "_x = 1\n"}))


if __name__ == "__main__":
    unittest.main()
