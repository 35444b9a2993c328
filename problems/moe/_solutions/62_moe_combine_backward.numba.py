"""numba-cuda solution for 62_moe_combine_backward: one block per token reads grad_out once per expert copy, writes
weight * grad_out into the copy's row of the expert gradient (float32) and reduces grad_out . expert_output for the
routing-weight gradient through shared memory. bfloat16 tensors are cast with torch (numba reads no bfloat16)."""

import torch
from numba import cuda, float32

THREADS = 256


@cuda.jit
def _combine_backward(grad_out, expert_outputs, weights, positions, grad_expert, grad_weights):
    token = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    partial = cuda.shared.array(THREADS, float32)
    for k in range(positions.shape[1]):
        row = positions[token, k]
        weight = weights[token, k]
        dot = float32(0.0)
        for col in range(tid, grad_out.shape[1], THREADS):
            dy = grad_out[token, col]
            grad_expert[row, col] = weight * dy
            dot += dy * expert_outputs[row, col]
        partial[tid] = dot
        cuda.syncthreads()
        stride = THREADS // 2
        while stride > 0:
            if tid < stride:
                partial[tid] += partial[tid + stride]
            cuda.syncthreads()
            stride //= 2
        if tid == 0:
            grad_weights[token, k] = partial[0]
        cuda.syncthreads()


def solve(grad_out, expert_outputs, routing_weights, positions):
    tokens, top_k = positions.shape
    device = grad_out.device
    grad_expert = torch.empty(expert_outputs.shape, device=device, dtype=torch.float32)
    grad_weights = torch.empty(tokens, top_k, device=device, dtype=torch.float32)
    _combine_backward[tokens, THREADS](grad_out.float(), expert_outputs.float(), routing_weights.float().contiguous(),
                                       positions.contiguous(), grad_expert, grad_weights)
    return grad_expert.to(expert_outputs.dtype), grad_weights
