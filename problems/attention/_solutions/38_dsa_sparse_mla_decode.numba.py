"""numba-cuda solution for 38_dsa_sparse_mla_decode as three tiled kernels (float32 on the CUDA cores: numba has no
tensor-core access). The picked rows are gathered once with torch (151 MB of bf16, widened to float32; the shipped
solution widened the whole 2.4 GB pool); then per sequence the [128 heads, 2048 picks] scores are a shared-memory
tiled GEMM over the 576 dims (128 x 128 output tiles, each thread 8 x 8 outputs in registers; unpicked slots -inf),
one block per (sequence, head) turns its score row into softmax weights in place, and the [128, 512] output is a
second tiled GEMM of the weights against the rows' 512 latent dims. The shipped solution scored one pick per thread
(each thread walking a different 576-wide row: uncoalesced, no reuse) and summed the output with no register
tiling."""

import math

import torch
from numba import cuda, float32

TILE = 128
TILE_PADDED = TILE + 1  # a shared array's shape must be a module constant: numba-cuda rejects 'TILE + 1' there
INNER = 16
PER_THREAD = 8  # 16 x 16 threads, 8 x 8 outputs each
THREADS = 256
LATENT_DIM = 512
SOFTMAX_SCALE = 192**-0.5


@cuda.jit
def _scores(q, rows, slots, scores):
    """scores[b, h, s] = scale * q[b, h, :] . rows[b, s, :], or -inf where slot s was not picked."""
    tile_q = cuda.shared.array((INNER, TILE_PADDED), float32)  # [dim, head]
    tile_k = cuda.shared.array((INNER, TILE_PADDED), float32)  # [dim, pick]
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    tid = ty * 16 + tx
    s0 = cuda.blockIdx.x * TILE
    h0 = cuda.blockIdx.y * TILE
    b = cuda.blockIdx.z
    acc = cuda.local.array((PER_THREAD, PER_THREAD), float32)
    a = cuda.local.array(PER_THREAD, float32)
    c = cuda.local.array(PER_THREAD, float32)
    for i in range(PER_THREAD):
        for j in range(PER_THREAD):
            acc[i, j] = float32(0.0)
    for d0 in range(0, q.shape[2], INNER):
        for load in range(tid, TILE * INNER, THREADS):
            r = load // INNER
            dd = load % INNER
            tile_q[dd, r] = q[b, h0 + r, d0 + dd]
            tile_k[dd, r] = rows[b, s0 + r, d0 + dd]
        cuda.syncthreads()
        for dd in range(INNER):
            for i in range(PER_THREAD):
                a[i] = tile_q[dd, ty + 16 * i]
            for j in range(PER_THREAD):
                c[j] = tile_k[dd, tx + 16 * j]
            for i in range(PER_THREAD):
                for j in range(PER_THREAD):
                    acc[i, j] += a[i] * c[j]
        cuda.syncthreads()
    for j in range(PER_THREAD):
        s = s0 + tx + 16 * j
        picked = slots[b, s] >= 0
        for i in range(PER_THREAD):
            scores[b, h0 + ty + 16 * i, s] = acc[i, j] * float32(SOFTMAX_SCALE) if picked else float32(-math.inf)


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
def _softmax(scores):
    """One block per (sequence, head): its score row becomes its softmax weights, in place."""
    heads = scores.shape[1]
    b = cuda.blockIdx.x // heads
    h = cuda.blockIdx.x % heads
    tid = cuda.threadIdx.x
    red = cuda.shared.array(THREADS, float32)
    picks = scores.shape[2]
    local = float32(-math.inf)
    for s in range(tid, picks, THREADS):
        local = max(local, scores[b, h, s])
    top = _block_reduce(red, tid, local, True)
    local = float32(0.0)
    for s in range(tid, picks, THREADS):
        x = scores[b, h, s]
        p = math.exp(x - top) if x > float32(-math.inf) else float32(0.0)
        scores[b, h, s] = p
        local += p
    total = _block_reduce(red, tid, local, False)
    inverse = float32(1.0) / total
    for s in range(tid, picks, THREADS):
        scores[b, h, s] *= inverse


@cuda.jit
def _weighted_sum(weights, rows, out):
    """out[b, h, n] = sum_s weights[b, h, s] * rows[b, s, n] over the first 512 dims of the rows."""
    tile_p = cuda.shared.array((INNER, TILE_PADDED), float32)  # [pick, head]
    tile_v = cuda.shared.array((INNER, TILE), float32)  # [pick, dim]
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    tid = ty * 16 + tx
    n0 = cuda.blockIdx.x * TILE
    h0 = cuda.blockIdx.y * TILE
    b = cuda.blockIdx.z
    acc = cuda.local.array((PER_THREAD, PER_THREAD), float32)
    a = cuda.local.array(PER_THREAD, float32)
    c = cuda.local.array(PER_THREAD, float32)
    for i in range(PER_THREAD):
        for j in range(PER_THREAD):
            acc[i, j] = float32(0.0)
    for k0 in range(0, weights.shape[2], INNER):
        for load in range(tid, TILE * INNER, THREADS):
            r = load // INNER
            kk = load % INNER
            tile_p[kk, r] = weights[b, h0 + r, k0 + kk]
            vk = load // TILE
            vn = load % TILE
            tile_v[vk, vn] = rows[b, k0 + vk, n0 + vn]
        cuda.syncthreads()
        for kk in range(INNER):
            for i in range(PER_THREAD):
                a[i] = tile_p[kk, ty + 16 * i]
            for j in range(PER_THREAD):
                c[j] = tile_v[kk, tx + 16 * j]
            for i in range(PER_THREAD):
                for j in range(PER_THREAD):
                    acc[i, j] += a[i] * c[j]
        cuda.syncthreads()
    for i in range(PER_THREAD):
        for j in range(PER_THREAD):
            out[b, h0 + ty + 16 * i, n0 + tx + 16 * j] = acc[i, j]


def solve(q, latent, topk_slots):
    batch, heads, width = q.shape
    picks = topk_slots.shape[1]
    assert heads % TILE == 0 and picks % TILE == 0 and width % INNER == 0 and LATENT_DIM % TILE == 0
    slots = topk_slots.contiguous()
    rows = latent[slots.clamp(min=0).to(torch.long)].float()  # [B, K, 576]: the picked rows, gathered once
    scores = torch.empty(batch, heads, picks, device=q.device, dtype=torch.float32)
    _scores[(picks // TILE, heads // TILE, batch), (16, 16)](q.float(), rows, slots, scores)
    _softmax[batch * heads, THREADS](scores)
    out = torch.empty(batch, heads, LATENT_DIM, device=q.device, dtype=torch.float32)
    _weighted_sum[(LATENT_DIM // TILE, heads // TILE, batch), (16, 16)](scores, rows, out)
    return out.to(q.dtype)
