"""GPU (label gpu): the device probe reads plausible peaks (H200: copy ≥ 3.5 TB/s, bf16 dense ≥ 600 TFLOP/s)."""

import io
import json
import os
import unittest

import gradertest  # noqa: F401

# CUDA must never be initialised in this process: the grader forks evaluation children from it.
os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")
HAS_GPU = False
try:
    import torch

    HAS_GPU = torch.cuda.is_available()
except ImportError:
    pass


@unittest.skipUnless(HAS_GPU, "needs an NVIDIA GPU")
class ProbeGpuTest(unittest.TestCase):
    def test_probe_reads_plausible_peaks(self) -> None:
        from mkbgrader.parent.server import Server

        buffer = io.StringIO()
        Server(buffer).probe({"id": "t", "device": "cuda:0"})
        reply = json.loads(buffer.getvalue())
        self.assertEqual(reply["type"], "probe_result", reply)
        device = reply["device"]
        print("\nprobe:", json.dumps(device))
        for key in ("name", "uuid", "compute_capability", "copy_gbps", "tflops"):
            self.assertIn(key, device)
        for dtype in ("float32", "tfloat32", "float16", "bfloat16"):
            self.assertGreater(device["tflops"][dtype], 1.0)
        if "H200" in device["name"] or os.environ.get("MKB_EXPECT_H200"):
            self.assertGreaterEqual(device["copy_gbps"], 3500)
            self.assertGreaterEqual(device["tflops"]["bfloat16"], 600)


if __name__ == "__main__":
    unittest.main()
