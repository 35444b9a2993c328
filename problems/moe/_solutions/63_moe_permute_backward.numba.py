"""numba-cuda solution for 63_moe_permute_backward: one block per token sums its top-k expert-sorted gradient copies
(gathered through positions) in float32 and in k order. bfloat16 tensors are cast with torch (numba reads no
bfloat16)."""

import torch
from numba import cuda, float32

THREADS = 256


@cuda.jit
def _unpermute(grad_permuted, positions, out):
    token = cuda.blockIdx.x
    top_k = positions.shape[1]
    for col in range(cuda.threadIdx.x, out.shape[1], THREADS):
        total = float32(0.0)
        for k in range(top_k):
            total += grad_permuted[positions[token, k], col]
        out[token, col] = total


def solve(grad_permuted, positions):
    tokens = positions.shape[0]
    out = torch.empty(tokens, grad_permuted.shape[1], device=grad_permuted.device, dtype=torch.float32)
    _unpermute[tokens, THREADS](grad_permuted.float(), positions.contiguous(), out)
    return out.to(grad_permuted.dtype)
