"""numba-cuda solution for 09_mla_absorbed_decode: one block per (sequence, head) scores the 576-wide latent rows and
sums the first 512 dims of the visible rows; bfloat16 tensors are cast to float32 with torch first (numba reads no
bfloat16)."""

import math

import torch
from numba import cuda, float32

KV_LORA_RANK = 512
SOFTMAX_SCALE = (128 + 64) ** -0.5

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


def solve(q, kv_cache, seq_lens):
    batch, heads, width = q.shape
    assert kv_cache.shape[1] <= MAX_KEYS and width <= MAX_DIM
    rows = kv_cache.float().unsqueeze(1)  # [B, 1, S, 576]: every head reads the same latent rows
    out = torch.empty(batch, heads, KV_LORA_RANK, device=q.device, dtype=torch.float32)
    _decode[(heads, batch), THREADS](q.float(), rows, rows[:, :, :, :KV_LORA_RANK], seq_lens.contiguous(), out,
                                     SOFTMAX_SCALE, heads, 1, heads)
    return out.to(q.dtype)
