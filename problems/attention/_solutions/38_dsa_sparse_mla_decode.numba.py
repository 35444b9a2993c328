"""numba-cuda solution for 38_dsa_sparse_mla_decode: one block per (sequence, head); each thread scores its share of
the 2048 picked pool rows (slot -1: not picked, weight 0) against the 576-wide query held in shared memory, the block
reduces the scores' maximum and exponential sum through shared memory, and each thread then writes the weighted sum
of the rows' 512 latent dims for its output dims. The heads of one sequence are neighbouring blocks, so its picked
rows are read from the cache. bfloat16 tensors are cast with torch (numba reads no bfloat16)."""

import math

import torch
from numba import cuda, float32

THREADS = 256
TOP_K = 2048
WIDTH = 576
LATENT_DIM = 512
SOFTMAX_SCALE = 192**-0.5


@cuda.jit(device=True)
def _block_reduce(red, tid, value, take_max):
    red[tid] = value
    cuda.syncthreads()
    stride = THREADS // 2
    while stride > 0:
        if tid < stride:
            red[tid] = max(red[tid], red[tid + stride]) if take_max else red[tid] + red[tid + stride]
        cuda.syncthreads()
        stride //= 2
    result = red[0]
    cuda.syncthreads()  # red is reused by the next reduction
    return result


@cuda.jit
def _sparse_decode(q, latent, slots, out):
    heads = q.shape[1]
    h = cuda.blockIdx.x % heads
    b = cuda.blockIdx.x // heads
    tid = cuda.threadIdx.x
    qs = cuda.shared.array(WIDTH, float32)
    probs = cuda.shared.array(TOP_K, float32)
    red = cuda.shared.array(THREADS, float32)
    for d in range(tid, WIDTH, THREADS):
        qs[d] = q[b, h, d] * float32(SOFTMAX_SCALE)
    cuda.syncthreads()
    local = float32(-math.inf)
    for s in range(tid, TOP_K, THREADS):
        slot = slots[b, s]
        score = float32(-math.inf)
        if slot >= 0:
            score = float32(0.0)
            for d in range(WIDTH):
                score += qs[d] * latent[slot, d]
        probs[s] = score
        local = max(local, score)
    top = _block_reduce(red, tid, local, True)
    local = float32(0.0)
    for s in range(tid, TOP_K, THREADS):
        p = math.exp(probs[s] - top) if slots[b, s] >= 0 else float32(0.0)
        probs[s] = p
        local += p
    total = _block_reduce(red, tid, local, False)
    for d in range(tid, LATENT_DIM, THREADS):
        acc = float32(0.0)
        for s in range(TOP_K):
            slot = slots[b, s]
            if slot >= 0:
                acc += probs[s] * latent[slot, d]
        out[b, h, d] = acc / total


def solve(q, latent, topk_slots):
    batch, heads, width = q.shape
    assert width == WIDTH and topk_slots.shape[1] == TOP_K
    out = torch.empty(batch, heads, LATENT_DIM, device=q.device, dtype=torch.float32)
    _sparse_decode[batch * heads, THREADS](q.float(), latent.float(), topk_slots.contiguous(), out)
    return out.to(q.dtype)
