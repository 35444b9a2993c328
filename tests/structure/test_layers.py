"""layers: cmake/CheckLayers.cmake, which the build runs before any core or gui file compiles, passes the real trees
and fails on a tree where a layer includes a layer it does not declare, naming the file, the include and what to do;
and core/CMakeLists.txt and gui/CMakeLists.txt list each layer after every layer it names (the stack that rules out
loops)."""

import os
import re
import shutil
import subprocess
import tempfile
import unittest

SOURCE = os.environ.get("MKB_SOURCE_DIR", os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
CHECK = os.path.join(SOURCE, "cmake", "CheckLayers.cmake")
DECLARATION = re.compile(r"^mkb_core_layer\((\w+)(?:\s+DEPENDS\s+([\w\s]+?))?(?:\s+LINK\s+[^)]*)?\)", re.M)


def declared_layers() -> list:
    """(name, [dependencies]) in core/CMakeLists.txt's order."""
    with open(os.path.join(SOURCE, "core", "CMakeLists.txt"), encoding="utf-8") as handle:
        text = handle.read()
    return [(m.group(1), (m.group(2) or "").split()) for m in DECLARATION.finditer(text)]


def declared_gui_layers() -> list:
    """(folder, [folders it names]) in gui/CMakeLists.txt's MKB_GUI_LAYERS order."""
    with open(os.path.join(SOURCE, "gui", "CMakeLists.txt"), encoding="utf-8") as handle:
        text = handle.read()
    block = text[text.index("set(MKB_GUI_LAYERS"):]
    block = block[:block.index(")")]
    entries = re.findall(r'"(\w+):([\w,]*)"', block)
    return [(name, [dep for dep in deps.split(",") if dep]) for name, deps in entries]


def check(core_dir: str, layers: list, tree: str = "core") -> subprocess.CompletedProcess:
    table = " ".join(f"{name}:{','.join(deps)}" for name, deps in layers)
    stamp = os.path.join(tempfile.mkdtemp(prefix="mkb-layers-"), "checked")
    return subprocess.run(["cmake", f"-DCORE_DIR={core_dir}", f"-DLAYERS={table}", f"-DSTAMP={stamp}", f"-DTREE={tree}",
                           "-P", CHECK], capture_output=True, text=True, timeout=120)


class LayersTest(unittest.TestCase):
    def test_every_core_folder_is_a_layer_declared_after_the_layers_it_names(self) -> None:
        layers = declared_layers()
        names = [name for name, _ in layers]
        folders = sorted(entry.name for entry in os.scandir(os.path.join(SOURCE, "core"))
                         if entry.is_dir() and any(f.endswith((".h", ".cpp")) for f in os.listdir(entry.path)))
        self.assertEqual(sorted(names), folders, "every C++ folder of core/ is a layer, and every layer a folder")
        for index, (name, deps) in enumerate(layers):
            for dep in deps:
                self.assertIn(dep, names[:index], f"layer {name} names {dep}, which is not declared before it")

    def test_the_real_tree_keeps_its_layers(self) -> None:
        done = check(os.path.join(SOURCE, "core"), declared_layers())
        self.assertEqual(done.returncode, 0, done.stderr)

    def test_every_gui_folder_is_listed_after_the_folders_it_names_and_keeps_to_them(self) -> None:
        layers = declared_gui_layers()
        names = [name for name, _ in layers]
        folders = sorted(entry.name for entry in os.scandir(os.path.join(SOURCE, "gui")) if entry.is_dir())
        self.assertEqual(sorted(names), folders, "every gui folder is listed in MKB_GUI_LAYERS")
        for index, (name, deps) in enumerate(layers):
            for dep in deps:
                self.assertIn(dep, names[:index], f"gui folder {name} names {dep}, which is not listed before it")
        done = check(os.path.join(SOURCE, "gui"), layers, tree="gui")
        self.assertEqual(done.returncode, 0, done.stderr)
        crossed = [(name, [dep for dep in deps if dep != "project"]) for name, deps in layers]
        done = check(os.path.join(SOURCE, "gui"), crossed, tree="gui")
        self.assertNotEqual(done.returncode, 0)  # the views include gui/project: naming none of it fails
        self.assertIn("layer 'charts' does not declare 'project'", done.stderr)

    def test_an_include_of_an_undeclared_layer_fails_naming_the_file_and_the_fix(self) -> None:
        root = tempfile.mkdtemp(prefix="mkb-layers-tree-")
        self.addCleanup(shutil.rmtree, root, True)
        for path, text in {"core/util/text.h": "#pragma once\n",
                           "core/store/store.h": '#pragma once\n#include "core/util/text.h"\n',
                           "core/util/paths.cpp": '#include "core/store/store.h"\n'}.items():
            os.makedirs(os.path.join(root, os.path.dirname(path)), exist_ok=True)
            with open(os.path.join(root, path), "w", encoding="utf-8") as handle:
                handle.write(text)
        layers = [("util", []), ("store", ["util"])]
        done = check(os.path.join(root, "core"), layers)
        self.assertNotEqual(done.returncode, 0)
        self.assertIn('core/util/paths.cpp: #include "core/store/store.h": layer \'util\' does not declare \'store\'',
                      done.stderr)
        self.assertIn("core/CMakeLists.txt", done.stderr)
        self.assertNotIn("store.h: #include", done.stderr)  # store may use util: it declares it
        with open(os.path.join(root, "core/util/paths.cpp"), "w", encoding="utf-8") as handle:
            handle.write('#include "core/util/text.h"\n')
        self.assertEqual(check(os.path.join(root, "core"), layers).returncode, 0)


if __name__ == "__main__":
    unittest.main()
