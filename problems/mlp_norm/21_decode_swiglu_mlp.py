"""Decode-batch SwiGLU MLP with its GEMMs: merged gate/up projection, SiLU-and-mul, down projection (Qwen2.5-7B)."""

import torch
import torch.nn.functional as F

# Qwen2.5-7B MLP for a decode batch of 32 tokens: hidden size 3584, intermediate size 18944, bf16 weights in vLLM's
# layout (merged gate_up_proj [2 x 18944, 3584], down_proj [3584, 18944]). With 32 tokens the step is bound by
# reading the 407 MB of weights. The projections return bf16 (fp32 accumulation); silu(gate) * up is computed in
# float32 and rounded to bf16 before the down projection.
# numba stays below eager here (0.46x [0.45, 0.48] on an H100, 2026-12-06): eager runs the 13 GFLOP on tensor cores in
# 0.37 ms, bound by reading the weights, while numba has no MMA instructions, so its float32 FMAs on the SIMT cores
# would need about 35 TFLOP/s, over half the H100's SIMT peak, to keep up; its solution, which reads each weight once as
# raw bf16 bits and keeps all 32 tokens' sums in registers, reaches about 16 TFLOP/s (the one before it, which widened
# the weights with torch every call, 0.04x).
# pallas stays below eager here (0.38x [0.37, 0.39] on an H100, 2026-12-06): its two tensor-core kernels take 0.175 ms
# of device time (Triton's 0.155 ms), while JAX's per-call host work around the jitted call and its 3 DLPack imports
# takes 0.70 ms outside the device, twice eager's 0.33 ms for everything; the cheapest Pallas round trip measured in
# the suite (problem 18: one import, one export) spends 0.49 ms there, so no Pallas solution can reach eager
# (inferred).
NUM_TOKENS = 32
HIDDEN = 3584
INTERMEDIATE = 18944

MKB_META = {
    "category": "MatrixMultiply",
    "tags": ["gemm", "gemm_epilogue", "activation", "decode"],
    "flops": 13035896832,  # 2 * 32 * 3584 * (2 * 18944) + 2 * 32 * 18944 * 3584
}


def make_inputs(device="cuda"):
    x = torch.randn(NUM_TOKENS, HIDDEN, device=device, dtype=torch.bfloat16)
    gate_up_weight = (torch.randn(2 * INTERMEDIATE, HIDDEN, device=device) / HIDDEN**0.5).to(torch.bfloat16)
    down_weight = (torch.randn(HIDDEN, INTERMEDIATE, device=device) * (2.0 / INTERMEDIATE**0.5)).to(torch.bfloat16)
    return [x, gate_up_weight, down_weight]


def _wide(t):
    return t if t.dtype == torch.float64 else t.float()


def reference(x, gate_up_weight, down_weight):
    gate_up = torch.matmul(x, gate_up_weight.t())
    half = gate_up.shape[-1] // 2
    hidden = (F.silu(_wide(gate_up[:, :half])) * _wide(gate_up[:, half:])).to(x.dtype)
    return torch.matmul(hidden, down_weight.t())
