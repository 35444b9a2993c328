"""numba-cuda solution for 41_qwen3_paged_decode_large_batch: one block per (sequence, query head) reads its KV head
(query head // 8) through the block table (page = block_table[b, s // 16], slot s % 16), keeps the scores of up to
8192 keys in shared memory, and takes the softmax and the weighted values in float32; bfloat16 tensors are cast to
float32 with torch first (numba reads no bfloat16)."""

import math

import torch
from numba import cuda, float32

PAGE = 16

THREADS = 128
MAX_KEYS = 8192
MAX_DIM = 128
NEG = -3.0e38


@cuda.jit
def _decode(q, k, v, block_table, lens, out, scale, group, new_tokens, heads):
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
            acc += qs[d] * float32(k[block_table[b, s // PAGE], s % PAGE, kv, d])
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
            acc += ps[s] * float32(v[block_table[b, s // PAGE], s % PAGE, kv, d])
        out[b, row, d] = acc / total


def solve(q, k_cache, v_cache, block_table, seq_lens):
    batch, query_heads, dim = q.shape
    group = query_heads // k_cache.shape[2]
    assert block_table.shape[1] * PAGE <= MAX_KEYS and dim <= MAX_DIM
    out = torch.empty(batch, query_heads, dim, device=q.device, dtype=torch.float32)
    _decode[(query_heads, batch), THREADS](q.float(), k_cache.float(), v_cache.float(), block_table.contiguous(),
                                           seq_lens.contiguous(), out, 1.0 / math.sqrt(dim), group, 1, query_heads)
    return out.to(q.dtype)
