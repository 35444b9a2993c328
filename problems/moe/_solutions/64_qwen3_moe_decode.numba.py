"""numba-cuda solution for 64_qwen3_moe_decode: one block per expert lists its routing slots (a block-wide prefix sum
of 'is mine' flags); then per (expert, column tile) a gate/up GEMM over the expert's slots, 16 at a time, with the
SwiGLU epilogue, and a down GEMM scaled by each slot's routing weight, both float32 on the CUDA cores (numba has no
tensor-core access) with the weight tiles staged in shared memory; a last kernel sums each token's 8 partial rows
in k order. The bf16 weights are read as 32-bit words and widened in the kernel (a bf16 is the top half of a
float32); torch casts the small activations to float32 and the result to bf16."""

import math

import torch
from numba import cuda, float32, int32
from numba.cuda import libdevice

TOP_K = 8
SCAN_THREADS = 1024
M_TILE = 16  # slots per GEMM pass
K_TILE = 64  # inner-dimension values per staged tile (32 words of bf16 pairs)
GATE_N = 64  # gate (and up) columns per gate/up block
DOWN_N = 128  # output columns per down block
WORDS = K_TILE // 2
K_PADDED = K_TILE + 1  # padded against bank conflicts; a shared array's shape must be a module constant


@cuda.jit(device=True)
def _low(word):
    return libdevice.int_as_float(int32(word << 16))


@cuda.jit(device=True)
def _high(word):
    return libdevice.int_as_float(int32(word & -65536))


@cuda.jit
def _bucket(ids, bucket, counts):
    """One block per expert walks the slots in order; a block-wide prefix sum of 'is mine' flags gives each of its
    slots its place in the expert's list, and the last running total is the expert's count."""
    expert = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    scan = cuda.shared.array(SCAN_THREADS, int32)
    base = 0
    for start in range(0, ids.shape[0], SCAN_THREADS):
        slot = start + tid
        flag = 1 if slot < ids.shape[0] and ids[slot] == expert else 0
        scan[tid] = flag
        cuda.syncthreads()
        offset = 1
        while offset < SCAN_THREADS:
            value = scan[tid - offset] if tid >= offset else 0
            cuda.syncthreads()
            scan[tid] += value
            cuda.syncthreads()
            offset *= 2
        if flag == 1:
            bucket[expert, base + scan[tid] - 1] = slot
        base += scan[SCAN_THREADS - 1]
        cuda.syncthreads()
    if tid == 0:
        counts[expert] = base


@cuda.jit
def _gate_up(x, w13_words, bucket, counts, h):
    """h[slot, n] = silu(x[token] . gate[n]) * (x[token] . up[n]) for the GATE_N columns n of this block; thread
    (tx, ty) owns slot row ty and columns tx + 16 j of the current 16-slot pass."""
    xs = cuda.shared.array((M_TILE, K_PADDED), float32)
    gate = cuda.shared.array((GATE_N, K_PADDED), float32)
    up = cuda.shared.array((GATE_N, K_PADDED), float32)
    expert = cuda.blockIdx.x
    n0 = cuda.blockIdx.y * GATE_N
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    tid = ty * 16 + tx
    intermediate = h.shape[1]
    count = counts[expert]
    for m0 in range(0, count, M_TILE):
        g0 = g1 = g2 = g3 = float32(0.0)
        u0 = u1 = u2 = u3 = float32(0.0)
        for k0 in range(0, x.shape[1], K_TILE):
            for i in range(tid, M_TILE * K_TILE, 256):
                r = i // K_TILE
                kk = i % K_TILE
                value = float32(0.0)
                if m0 + r < count:
                    value = x[bucket[expert, m0 + r] // TOP_K, k0 + kk]
                xs[r, kk] = value
            for i in range(tid, GATE_N * WORDS, 256):
                r = i // WORDS
                w = i % WORDS
                word = w13_words[expert, n0 + r, k0 // 2 + w]
                gate[r, 2 * w] = _low(word)
                gate[r, 2 * w + 1] = _high(word)
                word = w13_words[expert, intermediate + n0 + r, k0 // 2 + w]
                up[r, 2 * w] = _low(word)
                up[r, 2 * w + 1] = _high(word)
            cuda.syncthreads()
            for kk in range(K_TILE):
                a = xs[ty, kk]
                g0 += a * gate[tx, kk]
                g1 += a * gate[tx + 16, kk]
                g2 += a * gate[tx + 32, kk]
                g3 += a * gate[tx + 48, kk]
                u0 += a * up[tx, kk]
                u1 += a * up[tx + 16, kk]
                u2 += a * up[tx + 32, kk]
                u3 += a * up[tx + 48, kk]
            cuda.syncthreads()
        if m0 + ty < count:
            slot = bucket[expert, m0 + ty]
            h[slot, n0 + tx] = g0 / (float32(1.0) + math.exp(-g0)) * u0
            h[slot, n0 + tx + 16] = g1 / (float32(1.0) + math.exp(-g1)) * u1
            h[slot, n0 + tx + 32] = g2 / (float32(1.0) + math.exp(-g2)) * u2
            h[slot, n0 + tx + 48] = g3 / (float32(1.0) + math.exp(-g3)) * u3


@cuda.jit
def _down(h, w2_words, bucket, counts, weights, partial):
    """partial[slot, n] = weight[slot] * (h[slot] . w2[n]) for the DOWN_N columns n of this block; thread (tx, ty)
    owns slot row ty and columns tx + 16 j."""
    hs = cuda.shared.array((M_TILE, K_PADDED), float32)
    ws = cuda.shared.array((DOWN_N, K_PADDED), float32)
    expert = cuda.blockIdx.x
    n0 = cuda.blockIdx.y * DOWN_N
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    tid = ty * 16 + tx
    count = counts[expert]
    for m0 in range(0, count, M_TILE):
        a0 = a1 = a2 = a3 = a4 = a5 = a6 = a7 = float32(0.0)
        for k0 in range(0, h.shape[1], K_TILE):
            for i in range(tid, M_TILE * K_TILE, 256):
                r = i // K_TILE
                kk = i % K_TILE
                value = float32(0.0)
                if m0 + r < count:
                    value = h[bucket[expert, m0 + r], k0 + kk]
                hs[r, kk] = value
            for i in range(tid, DOWN_N * WORDS, 256):
                r = i // WORDS
                w = i % WORDS
                word = w2_words[expert, n0 + r, k0 // 2 + w]
                ws[r, 2 * w] = _low(word)
                ws[r, 2 * w + 1] = _high(word)
            cuda.syncthreads()
            for kk in range(K_TILE):
                a = hs[ty, kk]
                a0 += a * ws[tx, kk]
                a1 += a * ws[tx + 16, kk]
                a2 += a * ws[tx + 32, kk]
                a3 += a * ws[tx + 48, kk]
                a4 += a * ws[tx + 64, kk]
                a5 += a * ws[tx + 80, kk]
                a6 += a * ws[tx + 96, kk]
                a7 += a * ws[tx + 112, kk]
            cuda.syncthreads()
        if m0 + ty < count:
            slot = bucket[expert, m0 + ty]
            weight = weights[slot]
            partial[slot, n0 + tx] = weight * a0
            partial[slot, n0 + tx + 16] = weight * a1
            partial[slot, n0 + tx + 32] = weight * a2
            partial[slot, n0 + tx + 48] = weight * a3
            partial[slot, n0 + tx + 64] = weight * a4
            partial[slot, n0 + tx + 80] = weight * a5
            partial[slot, n0 + tx + 96] = weight * a6
            partial[slot, n0 + tx + 112] = weight * a7


@cuda.jit
def _combine(partial, out):
    hidden = out.shape[1]
    for index in range(cuda.grid(1), out.shape[0] * hidden, cuda.gridsize(1)):
        token = index // hidden
        n = index % hidden
        total = float32(0.0)
        for k in range(TOP_K):
            total += partial[token * TOP_K + k, n]
        out[token, n] = total


def solve(x, w13, w2, topk_weights, topk_ids):
    tokens, top_k = topk_ids.shape
    experts, width, hidden = w13.shape
    intermediate = w2.shape[2]
    assert top_k == TOP_K and width == 2 * intermediate
    assert intermediate % GATE_N == 0 and hidden % DOWN_N == 0 and hidden % K_TILE == 0 and intermediate % K_TILE == 0
    slots = tokens * top_k
    device = x.device
    ids = topk_ids.to(torch.int32).contiguous().view(slots)
    bucket = torch.empty(experts, slots, device=device, dtype=torch.int32)
    counts = torch.empty(experts, device=device, dtype=torch.int32)
    h = torch.empty(slots, intermediate, device=device, dtype=torch.float32)
    partial = torch.empty(slots, hidden, device=device, dtype=torch.float32)
    out = torch.empty(tokens, hidden, device=device, dtype=torch.float32)
    _bucket[experts, SCAN_THREADS](ids, bucket, counts)
    _gate_up[(experts, intermediate // GATE_N), (16, 16)](x.float().contiguous(), w13.contiguous().view(torch.int32),
                                                          bucket, counts, h)
    _down[(experts, hidden // DOWN_N), (16, 16)](h, w2.contiguous().view(torch.int32), bucket, counts,
                                                 topk_weights.float().contiguous().view(slots), partial)
    _combine[132 * 8, 256](partial, out)
    return out.to(x.dtype)
