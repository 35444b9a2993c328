"""numba-cuda solution for 04_mixtral_top2_router: one block per token computes the 8 gate logits (float32 partial sums
reduced through shared memory); thread 0 picks the top two and writes their renormalised softmax weights."""

import math

import torch
from numba import cuda, float32

THREADS = 256
EXPERTS = 8


@cuda.jit
def _router(hidden, gate_weight, dense):
    token = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    hidden_size = hidden.shape[1]
    partial = cuda.shared.array((EXPERTS, THREADS), float32)
    sums = cuda.local.array(EXPERTS, float32)
    for e in range(EXPERTS):
        sums[e] = 0.0
    for col in range(tid, hidden_size, THREADS):
        x = float32(hidden[token, col])
        for e in range(EXPERTS):
            sums[e] += x * float32(gate_weight[e, col])
    for e in range(EXPERTS):
        partial[e, tid] = sums[e]
    cuda.syncthreads()
    stride = THREADS // 2
    while stride > 0:
        if tid < stride:
            for e in range(EXPERTS):
                partial[e, tid] += partial[e, tid + stride]
        cuda.syncthreads()
        stride //= 2
    if tid == 0:
        first = 0
        for e in range(1, EXPERTS):
            if partial[e, 0] > partial[first, 0]:
                first = e
        second = 1 if first == 0 else 0
        for e in range(EXPERTS):
            if e != first and partial[e, 0] > partial[second, 0]:
                second = e
        # softmax(l)[a] / (softmax(l)[a] + softmax(l)[b]) = 1 / (1 + exp(l_b - l_a))
        w_first = float32(1.0) / (float32(1.0) + math.exp(partial[second, 0] - partial[first, 0]))
        for e in range(EXPERTS):
            dense[token, e] = 0.0
        dense[token, first] = w_first
        dense[token, second] = float32(1.0) - w_first


def solve(hidden, gate_weight):
    hidden, gate_weight = hidden.contiguous(), gate_weight.contiguous()
    dense = torch.empty(hidden.shape[0], gate_weight.shape[0], device=hidden.device, dtype=torch.float32)
    _router[hidden.shape[0], THREADS](hidden, gate_weight, dense)
    return dense
