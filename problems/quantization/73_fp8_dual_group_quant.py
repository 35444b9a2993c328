"""fp8 e4m3 quantisation in 1x128 groups and, transposed, in 128x1 groups, with float32 scales (DeepSeek-V3 FP8 training)."""

import torch

# DeepSeek-V3's FP8 training quantises an activation twice: in 1x128 groups along the hidden dimension for the
# forward GEMM, and in 128x1 groups along the tokens, stored transposed, for the weight-gradient GEMM. For a
# micro-batch of 8192 tokens at hidden 7168 (bf16), with scale = max(amax of the group, 1e-4) / 448:
#   q_row = e4m3(x / s_row)     [T, H],   s_row [T, H / 128]       (group = x[t, 128 j : 128 (j + 1)])
#   q_col = e4m3(x.T / s_col)   [H, T],   s_col [H, T / 128]       (group = x[128 i : 128 (i + 1), h])
# nearest e4m3, ties to even. Eager PyTorch runs the two quantisations and a transpose copy: an estimated
# 1.2-1.8 ms on an H200.
# numba stays below eager here (0.79x [0.78, 0.79] on an H100, 2026-12-07, bench/results/suite-4dsl-h100-r3.md): 2.72
# ms on the device against eager's 2.27 ms. numba reads no bfloat16 and has no fp8 type, so torch widens x to float32
# before its two kernels and rounds both float32 outputs to e4m3 after them: about 1.9 GB moved where Triton's one
# pass moves 0.24 GB (9.45x), and the column kernel's stores of the transpose are uncoalesced (neighbouring threads
# write rows 32 KB apart). Which of the two dominates was not profiled.
NUM_TOKENS = 8192
HIDDEN = 7168
GROUP = 128
FP8_MAX = 448.0
AMAX_FLOOR = 1e-4

MKB_META = {
    "category": "Quantization",
    "tags": ["quantize", "transpose", "reduction"],
    "quant": {"min_cosine": 0.9999, "max_relative_l1": 0.002, "max_rmse": 1.0},
    "outliers": {"inputs": [0]},
}


def _wide(t):
    return t if t.dtype == torch.float64 else t.float()


def _group_quant(rows):
    count, width = rows.shape
    groups = rows.view(count, width // GROUP, GROUP)
    scale = groups.abs().amax(dim=-1).clamp(min=AMAX_FLOOR) / FP8_MAX
    q = (groups / scale.unsqueeze(-1)).clamp(-FP8_MAX, FP8_MAX).to(torch.float8_e4m3fn)
    return q.view(count, width), scale.to(torch.float32)


def make_inputs(device="cuda"):
    channel_magnitude = 0.25 + 2.0 * torch.rand(1, HIDDEN, device=device)
    return [(torch.randn(NUM_TOKENS, HIDDEN, device=device) * channel_magnitude).to(torch.bfloat16)]


def reference(x):
    wide = _wide(x)
    q_row, s_row = _group_quant(wide)
    q_col, s_col = _group_quant(wide.t().contiguous())
    return q_row, s_row, q_col, s_col
