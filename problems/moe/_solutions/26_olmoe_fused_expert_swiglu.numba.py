"""numba-cuda solution for 26_olmoe_fused_expert_swiglu: one fused grouped GEMM + SwiGLU kernel with 128 x 128
block tiles, reading the bf16 inputs in the kernel.

The bf16 inputs are read as 32-bit words (two bf16 each) and widened while staged; tiles of 32 k sit in shared memory
as float32 [k][row], and the next tile's words are prefetched into registers while the current one is used. A block
owns 128 rows of one expert and 64 output columns (64 gate + 64 up weight rows) with 16 x 16 threads: thread (tx, ty)
owns rows ty + 16 i and columns tx + 16 j, 8 x 8 outputs, and applies silu(gate) * up in the epilogue. The output is
written as float32 and rounded to bf16 by torch. About 12% of the rows computed are wasted on each expert's partial
last row tile; a 64-row variant wasted 6% but staged more words per FMA, and was slower on an H100 (0.73x against
1.07x).
"""

import math

import torch
from numba import cuda, float32, int32
from numba.cuda import libdevice

HIDDEN = 2048
HIDDEN_WORDS = 1024  # a bf16 row of HIDDEN as 32-bit words
INTERMEDIATE = 1024
W13_ROWS = 2048  # 2 * INTERMEDIATE: gate rows, then up rows
BLOCK_M = 128  # expert rows per block
BLOCK_N = 64  # output columns per block: 64 gate + 64 up weight rows
BLOCK_K = 32  # k values per staged tile
K_WORDS = 16  # BLOCK_K // 2
K_TILES = 64  # HIDDEN // BLOCK_K
M_PADDED = 129  # BLOCK_M + 1: a shared array's shape must be a module constant
W_ROWS = 128  # 2 * BLOCK_N weight rows per block
W_PADDED = 129  # W_ROWS + 1
THREADS = 256  # 16 x 16: thread (tx, ty) owns rows ty + 16 i and columns tx + 16 j
A_LOADS = 8  # BLOCK_M * K_WORDS // THREADS words a thread stages per tile
W_LOADS = 8  # W_ROWS * K_WORDS // THREADS
W_HALF = 4  # W_LOADS // 2: the first half stages gate rows, the second up rows
ROW_STEP = 16  # THREADS // K_WORDS: rows between one thread's staged words
EXPERTS_MAX = 4096


@cuda.jit(device=True)
def _low(word):
    return libdevice.int_as_float(int32(word << 16))


@cuda.jit(device=True)
def _high(word):
    return libdevice.int_as_float(int32(word & -65536))


@cuda.jit(device=True)
def _k_step(acc, a, w, a_s, w_s, k, ty, tx):
    """acc[i, j] += a_s[k, ty + 16 i] * w_s[k, tx + 16 j]: 16 shared loads, 64 FMAs."""
    for i in range(8):
        a[i] = a_s[k, ty + 16 * i]
    for j in range(8):
        w[j] = w_s[k, tx + 16 * j]
    for i in range(8):
        for j in range(8):
            acc[i, j] += a[i] * w[j]


@cuda.jit(max_registers=128)  # two blocks an SM (CUDA 11.8's ptxas gives it 125 for sm_90)
def _gate_up_swiglu(x_words, w_words, offsets, num_experts, num_rows, out):
    """Block (column tile, row tile): out[r, n] = silu(x[r] . w13[e, n]) * (x[r] . w13[e, I + n]) for the rows r of
    the row tile (all of one expert e) and n in [n0, n0 + 64). x_words [rows * 1024] and w_words
    [experts * 2048 * 1024] are the bf16 inputs as flat 32-bit words. Index arithmetic is masked where that proves
    it non-negative, which spares numba's negative-index fix-up."""
    a_s = cuda.shared.array((BLOCK_K, M_PADDED), float32)  # activations, [k][row]
    w_s = cuda.shared.array((BLOCK_K, W_PADDED), float32)  # weights, [k][gate rows 0..63, up rows 64..127]
    tid = cuda.threadIdx.x & (THREADS - 1)
    tx = tid & 15
    ty = tid >> 4
    n0 = (cuda.blockIdx.x & 1023) * BLOCK_N
    tile = cuda.blockIdx.y
    expert = -1
    row_start = 0
    row_end = 0
    before = 0
    for e in range(num_experts):
        first = offsets[e]
        stop = offsets[e + 1]
        tiles = (stop - first + BLOCK_M - 1) // BLOCK_M
        if expert < 0 and tile < before + tiles:
            expert = e
            row_start = first + (tile - before) * BLOCK_M
            row_end = stop
        before += tiles
    if expert < 0:  # a spare tile: the whole block leaves together, before any barrier
        return
    expert = expert & (EXPERTS_MAX - 1)
    row_start = max(row_start, 0)
    last = max(min(row_end, num_rows) - 1, 0)  # rows past the expert's end are clamped, and never written

    # Staging: thread tid moves word w_ld of rows r_ld + ROW_STEP * it (16 threads cover one row's 64 bytes).
    w_ld = tid & (K_WORDS - 1)
    r_ld = tid >> 4
    a_base = cuda.local.array(A_LOADS, int32)  # word offsets of this thread's activation rows (fit in int32)
    for it in range(A_LOADS):
        a_base[it] = int32(min(row_start + r_ld + ROW_STEP * it, last) * HIDDEN_WORDS + w_ld)
    w_base = (expert * W13_ROWS + n0 + r_ld) * HIDDEN_WORDS + w_ld  # gate row n0 + r_ld; up rows are + INTERMEDIATE
    a_buf = cuda.local.array(A_LOADS, int32)
    w_buf = cuda.local.array(W_LOADS, int32)
    for it in range(A_LOADS):
        a_buf[it] = x_words[a_base[it] & 0x7FFFFFFF]
    for it in range(W_LOADS):
        w_buf[it] = w_words[w_base + ((it // W_HALF) * INTERMEDIATE + ROW_STEP * (it % W_HALF)) * HIDDEN_WORDS]

    acc = cuda.local.array((8, 8), float32)
    a = cuda.local.array(8, float32)
    w = cuda.local.array(8, float32)
    for i in range(8):
        for j in range(8):
            acc[i, j] = float32(0.0)
    for kt in range(K_TILES):
        for it in range(A_LOADS):
            word = a_buf[it]
            a_s[2 * w_ld, r_ld + ROW_STEP * it] = _low(word)
            a_s[2 * w_ld + 1, r_ld + ROW_STEP * it] = _high(word)
        for it in range(W_LOADS):
            word = w_buf[it]
            w_s[2 * w_ld, r_ld + ROW_STEP * it] = _low(word)
            w_s[2 * w_ld + 1, r_ld + ROW_STEP * it] = _high(word)
        cuda.syncthreads()
        following = min(((kt & (K_TILES - 1)) + 1) * K_WORDS, HIDDEN_WORDS - K_WORDS)  # the last tile reloads itself
        for it in range(A_LOADS):
            a_buf[it] = x_words[(a_base[it] & 0x7FFFFFFF) + following]
        for it in range(W_LOADS):
            w_buf[it] = w_words[w_base + ((it // W_HALF) * INTERMEDIATE + ROW_STEP * (it % W_HALF)) * HIDDEN_WORDS
                                + following]
        for kq in range(0, BLOCK_K, 8):  # unrolled by hand eight times: numba has no unroll pragma
            k = kq & (BLOCK_K - 1)
            _k_step(acc, a, w, a_s, w_s, k, ty, tx)
            _k_step(acc, a, w, a_s, w_s, k + 1, ty, tx)
            _k_step(acc, a, w, a_s, w_s, k + 2, ty, tx)
            _k_step(acc, a, w, a_s, w_s, k + 3, ty, tx)
            _k_step(acc, a, w, a_s, w_s, k + 4, ty, tx)
            _k_step(acc, a, w, a_s, w_s, k + 5, ty, tx)
            _k_step(acc, a, w, a_s, w_s, k + 6, ty, tx)
            _k_step(acc, a, w, a_s, w_s, k + 7, ty, tx)
        cuda.syncthreads()

    for i in range(8):
        row = row_start + ty + 16 * i
        if row < row_end:
            for j in range(4):
                gate = acc[i, j]
                out[row, n0 + tx + 16 * j] = gate / (float32(1.0) + math.exp(-gate)) * acc[i, j + 4]


def solve(hidden, w13, expert_offsets):
    num_rows, hidden_size = hidden.shape
    num_experts, width, _ = w13.shape
    assert hidden_size == HIDDEN and width == W13_ROWS and num_experts <= EXPERTS_MAX
    assert num_rows * HIDDEN_WORDS < 2**31
    x_words = hidden.contiguous().view(torch.int32).view(-1)  # the bf16 bits as flat words, no copy
    w_words = w13.contiguous().view(torch.int32).view(-1)
    offsets = expert_offsets.to(torch.int32).contiguous()
    out = torch.empty(num_rows, INTERMEDIATE, device=hidden.device, dtype=torch.float32)
    row_tiles = (num_rows + BLOCK_M - 1) // BLOCK_M + num_experts  # each expert wastes at most one partial tile
    _gate_up_swiglu[(INTERMEDIATE // BLOCK_N, row_tiles), THREADS](x_words, w_words, offsets, num_experts, num_rows,
                                                                   out)
    return out.to(hidden.dtype)
