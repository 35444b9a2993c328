"""MXFP4 quantisation of activations: e2m1 codes packed two per byte with one e8m0 scale per 32 values (OCP MX, Llama 4 Maverick width)."""

import torch

# The OCP Microscaling (MX) recipe for W4A4 MXFP4 GEMMs quantises activations on the fly. For Llama 4 Maverick's
# hidden width 5120 and an 8192-token prefill chunk of bf16 activations, per block of 32 consecutive values:
#   shared = floor(log2(amax)) - 2 (e2m1's largest exponent), or -127 when amax is 0, clamped to [-127, 127];
#   code   = the e2m1 value nearest to x / 2^shared (ties to the even code, saturating at 6), sign in bit 3;
#   bytes  = code[2i] | code[2i + 1] << 4  (uint8 [T, 2560]),   scales = shared + 127  (uint8 [T, 160]).
# x / 2^shared is exact, so the codes are fully determined. Rounding as thresholds on |x| / 2^shared:
# 0.25 (tie to 0), 0.75 (tie up), 1.25 (tie down), 1.75 (up), 2.5 (down), 3.5 (up), 5 (down). Eager PyTorch runs
# some twenty float32 passes over 84-168 MB: an estimated 1.5-2.5 ms on an H200.
NUM_TOKENS = 8192
HIDDEN = 5120
MX_BLOCK = 32

MKB_META = {
    "category": "Quantization",
    "tags": ["quantize", "reduction", "elementwise"],
    "quant": {"min_cosine": 0.9999, "max_relative_l1": 0.001, "max_rmse": 0.5},
    "outliers": {"inputs": [0]},
}


def _wide(t):
    return t if t.dtype == torch.float64 else t.float()


def make_inputs(device="cuda"):
    token_magnitude = 0.25 + 2.0 * torch.rand(NUM_TOKENS, 1, device=device)
    return [(torch.randn(NUM_TOKENS, HIDDEN, device=device) * token_magnitude).to(torch.bfloat16)]


def _e2m1_codes(values):
    a = values.abs()
    magnitude = ((a > 0.25).to(torch.uint8) + (a >= 0.75).to(torch.uint8) + (a > 1.25).to(torch.uint8)
                 + (a >= 1.75).to(torch.uint8) + (a > 2.5).to(torch.uint8) + (a >= 3.5).to(torch.uint8)
                 + (a > 5.0).to(torch.uint8))
    return magnitude + 8 * (values < 0).to(torch.uint8)


def reference(x):
    tokens, hidden = x.shape
    wide = _wide(x).view(tokens, hidden // MX_BLOCK, MX_BLOCK)
    amax = wide.abs().amax(dim=-1)
    exponent = torch.frexp(amax).exponent  # amax = m * 2^exponent with m in [0.5, 1)
    shared = torch.where(amax > 0, exponent - 3, torch.full_like(exponent, -127)).clamp(-127, 127)
    scaled = torch.ldexp(wide, (-shared).unsqueeze(-1).to(wide.dtype))
    codes = _e2m1_codes(scaled).view(tokens, hidden)
    packed = codes[:, 0::2] | (codes[:, 1::2] << 4)
    return packed, (shared + 127).to(torch.uint8)
