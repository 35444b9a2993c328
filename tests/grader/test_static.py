"""compliance_static: size limit, syntax, forbidden imports and patterns, kernel markers."""

import unittest

import gradertest
from mkbgrader.parent.compliance_static import check_source

CPUSIM = gradertest.descriptor("cpusim")
GOOD = "import cpusim\n\n@cpusim.kernel\ndef k(pid, x):\n    pass\n\ndef solve(x):\n    return x\n"


class StaticTest(unittest.TestCase):
    def test_good_source_passes(self) -> None:
        self.assertIsNone(check_source(GOOD, CPUSIM, 300_000))

    def test_size_limit(self) -> None:
        finding = check_source(GOOD + "#" * 300_000, CPUSIM, 300_000)
        self.assertEqual(finding.rule, "size")
        self.assertIn("the limit is 300000 bytes", finding.detail)

    def test_syntax_error_names_line(self) -> None:
        finding = check_source("def solve(x)\n  return x\n", CPUSIM, 300_000)
        self.assertEqual(finding.rule, "syntax")
        self.assertIn("line 1", finding.detail)

    def test_forbidden_imports_in_every_form(self) -> None:
        for line in ("import ctypes", "from subprocess import run", "import triton.language as tl",
                     "x = __import__('cupy')", "import importlib\nm = importlib.import_module('ctypes')"):
            finding = check_source(line + "\n" + GOOD, CPUSIM, 300_000)
            self.assertIsNotNone(finding, line)
            self.assertEqual(finding.rule, "forbidden_import", line)

    def test_similar_module_names_are_not_forbidden(self) -> None:
        self.assertIsNone(check_source("import tritonclient_helpers\n" + GOOD, CPUSIM, 300_000))

    def test_forbidden_pattern_ignores_comments(self) -> None:
        self.assertIsNone(check_source("# never torch.compile(solve)\n" + GOOD, CPUSIM, 300_000))
        finding = check_source(GOOD + "f = torch.compile(solve)\n", CPUSIM, 300_000)
        self.assertEqual(finding.rule, "forbidden_pattern")
        self.assertIn("line 9", finding.detail)

    def test_missing_kernel_marker(self) -> None:
        finding = check_source("import torch\ndef solve(x):\n    return x\n", CPUSIM, 300_000)
        self.assertEqual(finding.rule, "no_kernel")


if __name__ == "__main__":
    unittest.main()
