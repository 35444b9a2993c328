"""numba-cuda solution for 42_mla_prefix_suffix_merge: one block per token, its threads over (head, dim):
each row's two log-sum-exps give the merge weights (a missing prefix, lse = -inf, gets weight 0), and the merged
row and its new log-sum-exp are written in float32. bfloat16 tensors are cast with torch (numba reads no bfloat16)."""

import math

import torch
from numba import cuda

THREADS = 256


@cuda.jit
def _merge(prefix_out, prefix_lse, suffix_out, suffix_lse, out, lse):
    token = cuda.blockIdx.x
    heads, dim = out.shape[1], out.shape[2]
    for index in range(cuda.threadIdx.x, heads * dim, THREADS):
        head = index // dim
        d = index % dim
        l1 = prefix_lse[token, head]
        l2 = suffix_lse[token, head]
        m = max(l1, l2)
        w1 = math.exp(l1 - m)
        w2 = math.exp(l2 - m)
        total = w1 + w2
        out[token, head, d] = (prefix_out[token, head, d] * w1 + suffix_out[token, head, d] * w2) / total
        if d == 0:
            lse[token, head] = m + math.log(total)


def solve(prefix_out, prefix_lse, suffix_out, suffix_lse):
    tokens, heads, dim = suffix_out.shape
    out = torch.empty(suffix_out.shape, device=suffix_out.device, dtype=torch.float32)
    lse = torch.empty(tokens, heads, device=suffix_out.device, dtype=torch.float32)
    _merge[tokens, THREADS](prefix_out.float(), prefix_lse.contiguous(), suffix_out.float(), suffix_lse.contiguous(),
                            out, lse)
    return out.to(suffix_out.dtype), lse
