"""numba and pallas without their packages (issue 34): the one-line 'not installed' verdict, the numpy alias the numba
adapter restores, static compliance of the shipped solutions and of each DSL's escape hatches, and the strict
boundary's report of compute an adapter saw beside its kernels."""

import glob
import importlib.util
import json
import os
import sys
import types
import unittest

import gradertest

SOLUTIONS = os.path.join(gradertest.REPO, "problems")
KERNEL_DSLS = ("triton", "cuda", "cutedsl", "tirx", "numba", "pallas")


def descriptor(dsl: str) -> dict:
    with open(os.path.join(gradertest.REPO, "resources", "dsls", dsl + ".json"), encoding="utf-8") as handle:
        return json.load(handle)


def static(source: str, dsl: str):
    from mkbgrader.parent.compliance_static import check_source

    return check_source(source, descriptor(dsl), 262144)


class NotInstalledTest(unittest.TestCase):
    def test_numba_and_pallas_say_not_installed_in_one_line(self) -> None:
        from mkbgrader.parent.grade import grade
        from mkbgrader.parent.settings import parse_settings

        for dsl, module, hint in (("numba", "numba", "pip install numba-cuda"), ("pallas", "jax", "jax[cuda13]")):
            with self.subTest(dsl=dsl):
                if importlib.util.find_spec(module) is not None:
                    self.skipTest(f"{module} is installed here")
                request = {"problem": gradertest.problem("01_vector_add.py"),
                           "kernel": gradertest.solution("01_vector_add.cpusim.py"), "dsl": dsl,
                           "dsl_descriptor": {"id": dsl, "compliance": {"adapter": dsl}}, "device": "cpu"}
                verdict = grade(request, parse_settings(gradertest.FAST))
                self.assertEqual(verdict["stage"], "import")
                self.assertFalse(verdict["infrastructure_error"])
                self.assertFalse(verdict["imported"])
                self.assertIn(f"{dsl} is not installed", verdict["error"])
                self.assertIn(hint, verdict["error"])
                self.assertNotIn("\n", verdict["error"])

    def test_the_descriptors_name_adapters_the_grader_has(self) -> None:
        from mkbgrader.child.dsls import adapter_for

        for dsl in ("numba", "pallas"):
            adapter = adapter_for(dsl, descriptor(dsl))
            self.assertEqual(adapter.name, dsl)
            self.assertEqual(adapter.install_hint, descriptor(dsl)["install_hint"])


class NumpyAliasTest(unittest.TestCase):
    def test_a_numpy_without_row_stack_gets_vstack_under_that_name(self) -> None:
        from mkbgrader.child.dsls.numba import numpy_compatibility

        fake = types.ModuleType("numpy")
        fake.vstack = lambda arrays: ("vstack", arrays)
        real = sys.modules.get("numpy")
        sys.modules["numpy"] = fake
        try:
            self.assertEqual(numpy_compatibility(), ["row_stack"])
            self.assertIs(fake.row_stack, fake.vstack)
            self.assertEqual(numpy_compatibility(), [])  # already there: nothing to restore
        finally:
            if real is None:
                sys.modules.pop("numpy", None)
            else:
                sys.modules["numpy"] = real


class StaticComplianceTest(unittest.TestCase):
    def test_shipped_solutions_pass_their_own_dsl_and_no_other(self) -> None:
        found = 0
        for dsl in ("numba", "pallas"):
            for path in sorted(glob.glob(os.path.join(SOLUTIONS, "*", "_solutions", f"*.{dsl}.py"))):
                found += 1
                with open(path, encoding="utf-8") as handle:
                    source = handle.read()
                self.assertIsNone(static(source, dsl), path)
                for other in KERNEL_DSLS:
                    if other != dsl:
                        self.assertIsNotNone(static(source, other), f"{other} accepts {path}")
        self.assertGreaterEqual(found, 24)

    def test_triton_and_cuda_solutions_are_refused_by_numba_and_pallas(self) -> None:
        for path in sorted(glob.glob(os.path.join(SOLUTIONS, "*", "_solutions", "0[1-3]_*.triton.py")) +
                           glob.glob(os.path.join(SOLUTIONS, "*", "_solutions", "0[1-3]_*.cuda.py"))):
            with open(path, encoding="utf-8") as handle:
                source = handle.read()
            for dsl in ("numba", "pallas"):
                self.assertIsNotNone(static(source, dsl), f"{dsl} accepts {path}")

    def test_every_dsl_forbids_numba_and_jax_except_its_own(self) -> None:
        for dsl in KERNEL_DSLS:
            forbidden = descriptor(dsl)["compliance"]["forbidden_imports"]
            self.assertEqual("numba" in forbidden, dsl != "numba", dsl)
            self.assertEqual("jax" in forbidden, dsl != "pallas", dsl)

    def test_escape_hatches_are_refused(self) -> None:
        numba_kernel = "from numba import cuda\n@cuda.jit\ndef k(x):\n    pass\n"
        pallas_kernel = "from jax.experimental import pallas as pl\nf = pl.pallas_call(k, out_shape=s)\n"
        cases = [
            ("numba", "from numba import njit\n" + numba_kernel, "forbidden"),
            ("numba", "import numba\n@numba.jit\ndef host(x):\n    return x\n" + numba_kernel, "forbidden_pattern"),
            ("numba", numba_kernel + "for i in numba.prange(4):\n    pass\n", "forbidden_pattern"),
            ("numba", numba_kernel + "u = cuda.vectorize(['f4(f4)'])(lambda x: x)\n", "forbidden_pattern"),
            ("numba", "import triton\n" + numba_kernel, "forbidden_import"),
            ("numba", "import jax\n" + numba_kernel, "forbidden_import"),
            ("numba", "import cupy\n" + numba_kernel, "forbidden_import"),
            ("numba", "import torch\ny = torch.compile(f)\n" + numba_kernel, "forbidden_pattern"),
            ("numba", "import torch\ndef solve(x):\n    return x * 2\n", "no_kernel"),
            ("pallas", "import jax\n" + pallas_kernel + "y = jax.pure_callback(f, s, x)\n", "forbidden_pattern"),
            ("pallas", "import jax\n" + pallas_kernel + "y = jax.ffi.ffi_call('t', s)(x)\n", "forbidden_pattern"),
            ("pallas", "import triton\n" + pallas_kernel, "forbidden_import"),
            ("pallas", "from numba import cuda\n" + pallas_kernel, "forbidden_import"),
            ("pallas", "import jaxlib\n" + pallas_kernel, "forbidden_import"),
            ("pallas", "from jax._src import core\n" + pallas_kernel, "forbidden_import"),
            ("pallas", "import jax.numpy as jnp\ndef solve(x):\n    return jnp.sin(x)\n", "no_kernel"),
            ("triton", "import triton\nfrom numba import cuda\n@triton.jit\ndef k(x):\n    pass\n", "forbidden_import"),
            ("cuda", "import jax\nimport mkb_cuda\nk = mkb_cuda.compile('__global__ void k(){}', 'k')\n",
             "forbidden_import"),
        ]
        for dsl, source, rule in cases:
            with self.subTest(dsl=dsl, source=source.splitlines()[0]):
                finding = static(source, dsl)
                self.assertIsNotNone(finding)
                self.assertTrue(finding.rule.startswith(rule), (finding.rule, finding.detail))

    def test_a_plain_numba_and_pallas_kernel_pass(self) -> None:
        self.assertIsNone(static("from numba import cuda\n@cuda.jit\ndef k(x):\n    x[0] = 1\n", "numba"))
        self.assertIsNone(static("import jax\nfrom jax.experimental import pallas as pl\n"
                                 "f = pl.pallas_call(k, out_shape=jax.ShapeDtypeStruct((8,), 'float32'))\n",
                                 "pallas"))


class AdapterComputeBoundaryTest(unittest.TestCase):
    def recorder(self, boundary: str, foreign: str):
        import torch
        from mkbgrader.child.boundary import BoundaryRecorder

        reference = torch.ones(4)
        return BoundaryRecorder(boundary, lambda: False, reference, reference.double(), None, "pallas",
                                foreign=lambda: foreign)

    def test_strict_names_the_compute_an_adapter_saw(self) -> None:
        found = self.recorder("strict", "jax primitive mul (eager JAX compute outside a pallas kernel)").violation(
            [True])
        self.assertIsNotNone(found)
        self.assertEqual(found[0], "eager_compute")
        self.assertIn("jax primitive mul", found[1])
        self.assertIn("--boundary mkb", found[1])

    def test_mkb_lets_it_be_and_strict_without_it_passes(self) -> None:
        self.assertIsNone(self.recorder("mkb", "jax primitive mul").violation([True]))
        self.assertIsNone(self.recorder("strict", "").violation([True]))

    def test_the_guard_keeps_the_first_compute_it_is_told_of(self) -> None:
        from mkbgrader.child.compliance_runtime import RuntimeGuard

        guard = RuntimeGuard("cpu")
        guard.foreign_compute("jax primitive exp")
        guard.foreign_compute("jax primitive add")
        self.assertEqual(guard.foreign, "jax primitive exp")


if __name__ == "__main__":
    unittest.main()
