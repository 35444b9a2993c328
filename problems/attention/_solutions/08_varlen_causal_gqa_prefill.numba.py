"""numba-cuda solution for 08_varlen_causal_gqa_prefill: one block per (query head, token) finds its prompt in
cu_seqlens, scores the prompt's keys up to itself into shared memory and sums the values with the softmax weights;
bfloat16 tensors are cast to float32 with torch first."""

import math

import torch
from numba import cuda, float32

THREADS = 128
MAX_KEYS = 4096
MAX_DIM = 256
NEG = -3.0e38


@cuda.jit
def _prefill(q, k, v, cu_seqlens, out, scale, group, window, softcap):
    # One block per (query head, token): the token sees the keys of its own sequence up to itself (and, with a
    # window, only the last `window` of them); scores are soft-capped when softcap > 0.
    head = cuda.blockIdx.x
    token = cuda.blockIdx.y
    tid = cuda.threadIdx.x
    kv = head // group
    first = 0
    for i in range(cu_seqlens.shape[0] - 1):
        if cu_seqlens[i] <= token:
            first = cu_seqlens[i]
    if window > 0 and token - window + 1 > first:
        first = token - window + 1
    count = token + 1 - first
    dim = q.shape[2]
    qs = cuda.shared.array(MAX_DIM, float32)
    ps = cuda.shared.array(MAX_KEYS, float32)
    red = cuda.shared.array(THREADS, float32)
    for d in range(tid, dim, THREADS):
        qs[d] = q[token, head, d] * scale
    cuda.syncthreads()
    local = float32(NEG)
    for j in range(tid, count, THREADS):
        s = first + j
        acc = float32(0.0)
        for d in range(dim):
            acc += qs[d] * k[s, kv, d]
        if softcap > 0:
            acc = softcap * math.tanh(acc / softcap)
        ps[j] = acc
        local = max(local, acc)
    red[tid] = local
    cuda.syncthreads()
    stride = THREADS // 2
    while stride > 0:
        if tid < stride:
            red[tid] = max(red[tid], red[tid + stride])
        cuda.syncthreads()
        stride //= 2
    top = red[0]
    cuda.syncthreads()
    local = float32(0.0)
    for j in range(tid, count, THREADS):
        p = math.exp(ps[j] - top)
        ps[j] = p
        local += p
    red[tid] = local
    cuda.syncthreads()
    stride = THREADS // 2
    while stride > 0:
        if tid < stride:
            red[tid] += red[tid + stride]
        cuda.syncthreads()
        stride //= 2
    total = red[0]
    for d in range(tid, dim, THREADS):
        acc = float32(0.0)
        for j in range(count):
            acc += ps[j] * v[first + j, kv, d]
        out[token, head, d] = acc / total


def solve(q, k, v, cu_seqlens):
    total, query_heads, dim = q.shape
    group = query_heads // k.shape[1]
    assert dim <= MAX_DIM
    out = torch.empty(total, query_heads, dim, device=q.device, dtype=torch.float32)
    _prefill[(query_heads, total), THREADS](q.float(), k.float(), v.float(), cu_seqlens.contiguous(), out,
                                            1.0 / math.sqrt(dim), group, 0, 0.0)
    return out.to(q.dtype)
