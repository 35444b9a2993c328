"""Merge two partial attention results by their log-sum-exp (DeepSeek-V3 chunked prefill over a cached prefix)."""

import torch

# DeepSeek-V3 chunked prefill with a prefix cache (vLLM/SGLang "merge_attn_states"): the 128 MLA heads of a 16384-token
# prefill chunk attend once to the cached prefix and once, causally, to the chunk itself; each pass returns its output
# (value head dim 128, bf16) and the natural-log sum-exp of its scores per (token, head), float32. The merged output is
# the softmax-weighted mix out = (e^(l1 - m) o1 + e^(l2 - m) o2) / (e^(l1 - m) + e^(l2 - m)), m = max(l1, l2), with its
# merged log-sum-exp. A prefix pass that saw no keys reports -inf and leaves the suffix result unchanged.
# Eager estimate on an H200: ~0.45 ms (about ten elementwise passes over two 512 MB bf16 tensors' worth of traffic).
NUM_TOKENS = 16384
HEADS = 128
HEAD_DIM = 128

MKB_META = {
    "category": "Reduce",
    "tags": ["attention", "reduction", "elementwise", "mla", "prefill"],
    "outliers": {"inputs": [0, 2]},
}


def make_inputs(device="cuda"):
    prefix_out = torch.randn(NUM_TOKENS, HEADS, HEAD_DIM, device=device, dtype=torch.bfloat16)
    prefix_lse = 4.0 + 3.0 * torch.randn(NUM_TOKENS, HEADS, device=device, dtype=torch.float32)
    suffix_out = torch.randn(NUM_TOKENS, HEADS, HEAD_DIM, device=device, dtype=torch.bfloat16)
    suffix_lse = 4.0 + 3.0 * torch.randn(NUM_TOKENS, HEADS, device=device, dtype=torch.float32)
    prefix_lse[: NUM_TOKENS // 16] = float("-inf")  # the first sequences of the chunk have no cached prefix
    return [prefix_out, prefix_lse, suffix_out, suffix_lse]


def _wide(t):
    return t if t.dtype == torch.float64 else t.float()


def reference(prefix_out, prefix_lse, suffix_out, suffix_lse):
    l1 = _wide(prefix_lse)
    l2 = _wide(suffix_lse)
    m = torch.maximum(l1, l2)
    w1 = torch.exp(l1 - m)
    w2 = torch.exp(l2 - m)
    total = w1 + w2
    out = (_wide(prefix_out) * w1.unsqueeze(-1) + _wide(suffix_out) * w2.unsqueeze(-1)) / total.unsqueeze(-1)
    return out.to(suffix_out.dtype), (m + torch.log(total)).to(suffix_lse.dtype)
