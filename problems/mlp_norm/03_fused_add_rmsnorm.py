"""Residual add followed by RMSNorm at hidden size 4096, returning the normalised output and the new residual."""

import torch

# The pre-attention / pre-MLP step of a Llama-3-8B layer during prefill: 4096 tokens at hidden size 4096, eps 1e-5.
# The sum of the block's output and the residual stream becomes the new residual; its RMS-normalised, weighted
# version feeds the next block.
# pallas stays below eager here (0.51x [0.49, 0.52] on an H100, 2026-12-06): its kernel matches Triton's device time
# (0.042 against 0.040 ms), but JAX's per-call host work around the jitted pallas_call and its 3 DLPack imports takes
# 0.97 ms outside the device, almost twice eager's 0.52 ms for everything. The cheapest Pallas round trip measured in
# the suite (problem 18: one import, one export) spends 0.49 ms outside the device, which with the kernel alone
# exceeds eager, so no Pallas solution is expected to reach eager (inferred).
# bench/results/suite-4dsl-h100-r3.md (grader 10bf8b0753e6, another H100): 0.86x [0.80, 0.89], 0.043 ms on the device
# and 0.52 ms outside it, against eager's 0.49 ms: the host work differs by host, and still exceeds eager alone.
NUM_TOKENS = 4096
HIDDEN = 4096
EPS = 1e-5

MKB_META = {
    "category": "Normalization",
    "tags": ["reduction", "elementwise", "normalization"],
}


def make_inputs(device="cuda"):
    hidden = torch.randn(NUM_TOKENS, HIDDEN, device=device, dtype=torch.float16)
    residual = torch.randn(NUM_TOKENS, HIDDEN, device=device, dtype=torch.float16)
    weight = (1.0 + 0.1 * torch.randn(HIDDEN, device=device)).to(torch.float16)
    return [hidden, residual, weight]


def reference(hidden, residual, weight):
    summed = hidden.float() + residual.float()
    inverse_rms = torch.rsqrt(summed.pow(2).mean(dim=-1, keepdim=True) + EPS)
    normed = summed * inverse_rms * weight.float()
    return normed.to(hidden.dtype), summed.to(hidden.dtype)
