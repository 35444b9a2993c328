"""MXFP4 expert gate/up GEMV for a decode batch: 4-bit e2m1 weights with e8m0 block scales, top-4 of 128 experts (GPT-OSS-120B)."""

import torch

# GPT-OSS-120B ships its 128 experts per layer in MXFP4 (hidden 2880, gate and up interleaved into 5760 rows,
# top-4 routing). Each weight row of 2880 values is stored as 1440 bytes, two e2m1 codes per byte (element 2i in
# the low nibble, 2i + 1 in the high one), and one e8m0 scale byte per 32 values (value = code * 2^(byte - 127)).
# The H200 has no FP4 unit, so this is the emulated path: for a decode batch of 64 tokens, with e = topk_ids[t, k]:
#   out[t, k] = x[t] @ dequant(w_blocks[e], w_scales[e]).T + bias[e]                   float32 math, bf16 out
# The packed weights take 1.1 GB; 64 x 4 slots touch most experts, so a kernel streams nearly all of them:
# about 0.3 ms at the H200's bandwidth. Eager PyTorch loops over the experts in use, dequantising each in
# about ten launches: an estimated 8-12 ms.
NUM_TOKENS = 64
HIDDEN = 2880
OUT_ROWS = 2 * 2880
NUM_EXPERTS = 128
TOP_K = 4
MX_BLOCK = 32
E2M1_VALUES = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0]

MKB_META = {
    "category": "Quantization",
    "tags": ["gemm_epilogue", "dequantize", "decode", "routing", "memory"],
    "outliers": {"inputs": [0]},
    "flops": 8493465600,  # 2 * 64 * 4 * 5760 * 2880
}


def _wide(t):
    return t if t.dtype == torch.float64 else t.float()


def make_inputs(device="cuda"):
    x = torch.randn(NUM_TOKENS, HIDDEN, device=device, dtype=torch.bfloat16)
    w_blocks = torch.randint(0, 256, (NUM_EXPERTS, OUT_ROWS, HIDDEN // 2), device=device, dtype=torch.uint8)
    w_scales = torch.randint(119, 124, (NUM_EXPERTS, OUT_ROWS, HIDDEN // MX_BLOCK), device=device, dtype=torch.uint8)
    bias = (0.1 * torch.randn(NUM_EXPERTS, OUT_ROWS, device=device)).to(torch.bfloat16)
    logits = torch.randn(NUM_TOKENS, NUM_EXPERTS, device=device)
    topk_ids = logits.topk(TOP_K, dim=-1).indices.to(torch.int32)
    return [x, w_blocks, w_scales, bias, topk_ids]


def _dequantize(blocks, scales, dtype):
    table = torch.tensor(E2M1_VALUES, dtype=dtype, device=blocks.device)
    codes = torch.stack([blocks & 15, blocks >> 4], dim=-1).reshape(blocks.shape[0], -1).to(torch.long)
    values = table[codes].view(blocks.shape[0], -1, MX_BLOCK)
    exponents = scales.to(torch.int32) - 127
    return torch.ldexp(values, exponents.unsqueeze(-1).to(dtype)).reshape(blocks.shape[0], -1)


def reference(x, w_blocks, w_scales, bias, topk_ids):
    wide_x = _wide(x)
    ids = topk_ids.to(torch.long)
    out = torch.empty(ids.shape[0], ids.shape[1], w_blocks.shape[1], dtype=x.dtype, device=x.device)
    for expert in torch.unique(ids).tolist():
        token_index, slot_index = torch.nonzero(ids == expert, as_tuple=True)
        weight = _dequantize(w_blocks[expert], w_scales[expert], wide_x.dtype)
        y = torch.matmul(wide_x[token_index], weight.t()) + _wide(bias[expert])
        out[token_index, slot_index] = y.to(x.dtype)
    return out
