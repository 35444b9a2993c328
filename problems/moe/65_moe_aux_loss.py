"""MoE load-balancing auxiliary loss over a global batch of 524288 tokens (Qwen3-30B-A3B router, 128 experts, top-8)."""

import torch

# Qwen3-30B-A3B balances its router over the global batch (coefficient 0.001, 128 experts, 8 per token): 128
# sequences of 4096 tokens, 524288 rows of float32 router logits. With p = softmax(logits) per token, f[e] the
# fraction of the T*8 routing slots whose top-8 pick expert e and P[e] = mean over tokens of p[t, e]:
#   loss = coef * E * sum_e f[e] * P[e]                                   float32 scalar
# A tie at the 8th place (rare, but possible among 67 M float32 draws) moves one slot between two experts and the
# loss by about 1e-10, far inside the allowance. Only the forward is posed: the gradient of this mean-over-tokens
# loss is about 1e-8 per logit. Eager PyTorch (softmax, topk, scatter-add counts, mean, product) runs about ten
# kernels over 268 MB: an estimated 0.5-0.8 ms on an H200.
NUM_TOKENS = 524288
NUM_EXPERTS = 128
TOP_K = 8
AUX_COEF = 0.001

MKB_META = {
    "category": "Loss",
    "tags": ["reduction", "topk", "routing", "loss"],
}


def _wide(t):
    return t if t.dtype == torch.float64 else t.float()


def make_inputs(device="cuda"):
    popularity = torch.randn(NUM_EXPERTS, device=device) * 0.5
    logits = torch.randn(NUM_TOKENS, NUM_EXPERTS, device=device) + popularity
    return [logits]


def reference(logits):
    wide = _wide(logits)
    tokens, experts = wide.shape
    probs = torch.softmax(wide, dim=-1)
    topk_ids = wide.topk(TOP_K, dim=-1).indices
    counts = torch.zeros(experts, dtype=wide.dtype, device=wide.device)
    counts.scatter_add_(0, topk_ids.reshape(-1), torch.ones(topk_ids.numel(), dtype=wide.dtype, device=wide.device))
    fraction = counts / (tokens * TOP_K)
    mean_prob = probs.mean(dim=0)
    return (AUX_COEF * experts * (fraction * mean_prob).sum()).to(torch.float32)
