"""numba-cuda solution for 40_gpt_oss_sink_sliding_window_prefill: one block per (sequence, query position, query
head), one thread per key of the 128-key window: scores go to shared memory, the block reduces their maximum (with
the head's sink logit) and their exponential sum (the sink adds exp(sink - max) to the denominator only), and the
first 64 threads write the weighted values. bfloat16 tensors are cast with torch (numba reads no bfloat16)."""

import math

import torch
from numba import cuda, float32

WINDOW = 128
HEAD_DIM = 64


@cuda.jit
def _attend(q, k, v, sinks, out, group):
    seq_len, heads = q.shape[1], q.shape[2]
    h = cuda.blockIdx.x % heads
    t = (cuda.blockIdx.x // heads) % seq_len
    b = cuda.blockIdx.x // (heads * seq_len)
    kv = h // group
    j = cuda.threadIdx.x
    key = t - (WINDOW - 1) + j  # the window's keys, oldest first
    qs = cuda.shared.array(HEAD_DIM, float32)
    probs = cuda.shared.array(WINDOW, float32)
    red = cuda.shared.array(WINDOW, float32)
    if j < HEAD_DIM:
        qs[j] = q[b, t, h, j] / math.sqrt(float32(HEAD_DIM))
    cuda.syncthreads()
    score = float32(-math.inf)
    if key >= 0:
        score = float32(0.0)
        for d in range(HEAD_DIM):
            score += qs[d] * k[b, key, kv, d]
    red[j] = score
    cuda.syncthreads()
    stride = WINDOW // 2
    while stride > 0:
        if j < stride:
            red[j] = max(red[j], red[j + stride])
        cuda.syncthreads()
        stride //= 2
    sink = sinks[h]
    top = max(red[0], sink)
    cuda.syncthreads()
    p = math.exp(score - top) if key >= 0 else float32(0.0)
    probs[j] = p
    red[j] = p
    cuda.syncthreads()
    stride = WINDOW // 2
    while stride > 0:
        if j < stride:
            red[j] += red[j + stride]
        cuda.syncthreads()
        stride //= 2
    denominator = red[0] + math.exp(sink - top)
    if j < HEAD_DIM:
        acc = float32(0.0)
        for i in range(WINDOW):
            source = t - (WINDOW - 1) + i
            if source >= 0:
                acc += probs[i] * v[b, source, kv, j]
        out[b, t, h, j] = acc / denominator


def solve(q, k, v, sinks):
    batch, seq_len, heads, dim = q.shape
    assert dim == HEAD_DIM
    out = torch.empty(q.shape, device=q.device, dtype=torch.float32)
    _attend[batch * seq_len * heads, WINDOW](q.float(), k.float(), v.float(), sinks.float().contiguous(), out,
                                             heads // k.shape[2])
    return out.to(q.dtype)
