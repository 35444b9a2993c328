"""MoE load-balancing auxiliary loss over a global batch, forward and backward (Qwen3-30B-A3B router, 128 experts, top-8)."""

import torch

# Qwen3-30B-A3B's router auxiliary loss (coefficient 0.001, 128 experts, 8 per token) over a global batch of
# 131072 tokens of float32 router logits. With p = softmax(logits) per token, f[e] the fraction of the T*8
# routing slots whose top-8 pick expert e and P[e] = mean over tokens of p[t, e]:
#   loss        = coef * E * sum_e f[e] * P[e]                                            float32 scalar
#   grad_logits = p * (g - sum_e p * g) with g[e] = grad_loss * coef * E * f[e] / T     (f has no gradient)
# grad_loss is the upstream gradient of the loss, here a dynamic loss scale of 2^15 .. 2^16 (the unscaled gradient,
# about 1e-8, would be lost in bf16 master-gradient buckets). Ties in the top-8 do not occur with these draws. Eager PyTorch (softmax, topk, one-hot counts, two reductions,
# then the softmax backward) runs some fifteen kernels over 64 MB: an estimated 0.3-0.5 ms on an H200.
NUM_TOKENS = 131072
NUM_EXPERTS = 128
TOP_K = 8
AUX_COEF = 0.001

MKB_META = {
    "category": "Loss",
    "tags": ["reduction", "topk", "routing", "loss", "backward"],
}


def _wide(t):
    return t if t.dtype == torch.float64 else t.float()


def make_inputs(device="cuda"):
    popularity = torch.randn(NUM_EXPERTS, device=device) * 0.5
    logits = torch.randn(NUM_TOKENS, NUM_EXPERTS, device=device) + popularity
    grad_loss = 32768.0 * (1.0 + torch.rand(1, device=device))
    return [logits, grad_loss]


def reference(logits, grad_loss):
    wide = _wide(logits)
    tokens, experts = wide.shape
    probs = torch.softmax(wide, dim=-1)
    topk_ids = wide.topk(TOP_K, dim=-1).indices
    counts = torch.zeros(experts, dtype=wide.dtype, device=wide.device)
    counts.scatter_add_(0, topk_ids.reshape(-1), torch.ones(topk_ids.numel(), dtype=wide.dtype, device=wide.device))
    fraction = counts / (tokens * TOP_K)
    mean_prob = probs.mean(dim=0)
    loss = AUX_COEF * experts * (fraction * mean_prob).sum()
    g = _wide(grad_loss) * (AUX_COEF * experts / tokens) * fraction
    grad = probs * (g - (probs * g).sum(dim=-1, keepdim=True))
    return loss.to(torch.float32), grad.to(torch.float32)
