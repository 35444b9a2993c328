"""Fused MoE layer for a decode batch: top-8 of 128 SwiGLU experts with 4.8 GB of bf16 weights (Qwen3-235B-A22B)."""

import torch

# One MoE layer of Qwen3-235B-A22B (hidden 4096, 128 experts, moe_intermediate 1536, 8 experts per token) for a
# decode batch of 128 sequences, bf16, one GPU holding all experts. w13[e] stacks expert e's gate and up
# projections ([2 * 1536, 4096]); w2[e] is its down projection ([4096, 1536]). For every token t and slot k with
# e = topk_ids[t, k]:
#   h = silu(x[t] @ w13[e, :1536].T) * (x[t] @ w13[e, 1536:].T)        (bf16, as the model computes it)
#   out[t] = sum_k topk_weights[t, k] * (h @ w2[e].T)                   summed in k order in float32, bf16 out
# The weights take 4.8 GB; a batch this size touches nearly every expert, so any kernel must stream them all:
# about 1.1 ms at the H200's bandwidth. Eager PyTorch loops over the experts (about ten launches each, a host
# sync to find each expert's tokens): an estimated 8-12 ms.
NUM_TOKENS = 128
HIDDEN = 4096
NUM_EXPERTS = 128
INTERMEDIATE = 1536
TOP_K = 8

MKB_META = {
    "category": "Fusion",
    "tags": ["gemm", "grouped_gemm", "routing", "activation", "decode", "memory"],
    "outliers": {"inputs": [0]},
    "flops": 38654705664,  # 2 * 128 * 8 * 3 * 1536 * 4096
}


def _wide(t):
    return t if t.dtype == torch.float64 else t.float()


def make_inputs(device="cuda"):
    x = torch.randn(NUM_TOKENS, HIDDEN, device=device, dtype=torch.bfloat16)
    w13 = (torch.randn(NUM_EXPERTS, 2 * INTERMEDIATE, HIDDEN, device=device, dtype=torch.bfloat16) / HIDDEN**0.5)
    w2 = (torch.randn(NUM_EXPERTS, HIDDEN, INTERMEDIATE, device=device, dtype=torch.bfloat16) / INTERMEDIATE**0.5)
    logits = torch.randn(NUM_TOKENS, NUM_EXPERTS, device=device)
    top_logits, topk_ids = logits.topk(TOP_K, dim=-1)
    topk_weights = torch.softmax(top_logits, dim=-1)  # norm_topk_prob: the 8 weights sum to 1
    return [x, w13, w2, topk_weights, topk_ids.to(torch.int32)]


def reference(x, w13, w2, topk_weights, topk_ids):
    tokens, top_k = topk_ids.shape
    intermediate = w2.shape[2]
    ids = topk_ids.to(torch.long)
    weights = _wide(topk_weights)
    partial = torch.zeros(tokens, top_k, w2.shape[1], dtype=weights.dtype, device=x.device)
    for expert in torch.unique(ids).tolist():
        token_index, slot_index = torch.nonzero(ids == expert, as_tuple=True)
        rows = x[token_index]
        gate_up = torch.matmul(rows, w13[expert].t())
        h = torch.nn.functional.silu(gate_up[:, :intermediate]) * gate_up[:, intermediate:]
        y = torch.matmul(h, w2[expert].t())
        partial[token_index, slot_index] = _wide(y) * weights[token_index, slot_index].unsqueeze(1)
    return partial.sum(dim=1).to(x.dtype)
