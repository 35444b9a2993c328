"""numba-cuda solution for 11_speculative_verify_attention: one block per (sequence, draft token, query head) over the
cache viewed as [batch, head, slot, dim]; each draft token sees the slots up to its own position."""

import math

import torch
from numba import cuda, float32

THREADS = 128
MAX_KEYS = 4096
MAX_DIM = 576
NEG = -3.0e38


@cuda.jit
def _decode(q, k, v, lens, out, scale, group, new_tokens, heads):
    # One block per (query row, batch): rows are (token, head) pairs; KV head = head // group.
    row = cuda.blockIdx.x
    b = cuda.blockIdx.y
    tid = cuda.threadIdx.x
    head = row % heads
    token = row // heads
    kv = head // group
    limit = lens[b] - new_tokens + token + 1  # keys [0, limit) are visible
    dk = q.shape[2]
    dv = out.shape[2]
    qs = cuda.shared.array(MAX_DIM, float32)
    ps = cuda.shared.array(MAX_KEYS, float32)
    red = cuda.shared.array(THREADS, float32)
    for d in range(tid, dk, THREADS):
        qs[d] = float32(q[b, row, d]) * scale
    cuda.syncthreads()
    local = float32(NEG)
    for s in range(tid, limit, THREADS):
        acc = float32(0.0)
        for d in range(dk):
            acc += qs[d] * float32(k[b, kv, s, d])
        ps[s] = acc
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
    for s in range(tid, limit, THREADS):
        p = math.exp(ps[s] - top)
        ps[s] = p
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
    for d in range(tid, dv, THREADS):
        acc = float32(0.0)
        for s in range(limit):
            acc += ps[s] * float32(v[b, kv, s, d])
        out[b, row, d] = acc / total


def solve(q, k_cache, v_cache, cache_lens):
    batch, new_tokens, query_heads, dim = q.shape
    group = query_heads // k_cache.shape[2]
    assert k_cache.shape[1] <= MAX_KEYS and dim <= MAX_DIM
    rows = q.contiguous().view(batch, new_tokens * query_heads, dim)  # row = token * heads + head
    keys = k_cache.permute(0, 2, 1, 3)  # strided views: numba reads the strides from the array interface
    values = v_cache.permute(0, 2, 1, 3)
    out = torch.empty(batch, new_tokens * query_heads, dim, device=q.device, dtype=torch.float32)
    _decode[(new_tokens * query_heads, batch), THREADS](rows, keys, values, cache_lens.contiguous(), out,
                                                        1.0 / math.sqrt(dim), group, new_tokens, query_heads)
    return out.view(batch, new_tokens, query_heads, dim).to(q.dtype)
