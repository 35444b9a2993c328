"""numba-cuda solution for 24_moe_weighted_combine: one block per token walks its hidden row and adds its top-k
expert outputs (gathered through positions), each times its routing weight, in float32 and in k order. bfloat16
tensors are cast with torch (numba reads no bfloat16)."""

import torch
from numba import cuda, float32

THREADS = 256


@cuda.jit
def _combine(expert_outputs, weights, positions, out):
    token = cuda.blockIdx.x
    top_k = positions.shape[1]
    for col in range(cuda.threadIdx.x, out.shape[1], THREADS):
        total = float32(0.0)
        for k in range(top_k):
            total += weights[token, k] * expert_outputs[positions[token, k], col]
        out[token, col] = total


def solve(expert_outputs, routing_weights, positions):
    tokens = positions.shape[0]
    out = torch.empty(tokens, expert_outputs.shape[1], device=expert_outputs.device, dtype=torch.float32)
    _combine[tokens, THREADS](expert_outputs.float(), routing_weights.float().contiguous(), positions.contiguous(), out)
    return out.to(expert_outputs.dtype)
