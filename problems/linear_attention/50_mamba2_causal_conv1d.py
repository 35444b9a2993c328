"""Causal depthwise conv1d with bias and SiLU over the xBC projection of a prefill batch (Mamba2-2.7B, width 4)."""

import torch
import torch.nn.functional as F

# Mamba2-2.7B (d_model 2560, expand 2: d_inner 5120, one B/C group of d_state 128): before the SSD scan the x, B and C
# channels (conv_dim = 5120 + 2 * 128 = 5376) go through a causal depthwise convolution of width 4 with bias, then
# SiLU, as causal_conv1d_fn does: out[b, c, t] = silu(bias[c] + sum_j weight[c, j] * x[b, c, t - 3 + j]), positions
# before 0 read as zero. A prefill batch of 8 sequences of 4096 tokens in the channel-major [B, C, T] layout, bf16.
# Eager estimate on an H200: ~1.5 ms (fp32 casts of 350 MB, a cuDNN depthwise conv, SiLU, the bf16 cast).
BATCH = 8
CONV_DIM = 5376
SEQ_LEN = 4096
WIDTH = 4

MKB_META = {
    "category": "Convolution",
    "tags": ["convolution", "elementwise", "activation", "mamba"],
    "outliers": {"inputs": [0]},
}


def make_inputs(device="cuda"):
    x = torch.randn(BATCH, CONV_DIM, SEQ_LEN, device=device, dtype=torch.bfloat16)
    weight = (torch.randn(CONV_DIM, WIDTH, device=device) / WIDTH**0.5).to(torch.bfloat16)
    bias = (0.1 * torch.randn(CONV_DIM, device=device)).to(torch.bfloat16)
    return [x, weight, bias]


def _wide(t):
    return t if t.dtype == torch.float64 else t.float()


def reference(x, weight, bias):
    channels, width = weight.shape
    seq_len = x.shape[-1]
    y = F.conv1d(_wide(x), _wide(weight).unsqueeze(1), _wide(bias), padding=width - 1, groups=channels)
    return F.silu(y[..., :seq_len]).to(x.dtype)
