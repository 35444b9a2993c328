"""numba-cuda solution for 05_int8_w8a8_gemm: a register-tiled int8 GEMM on the CUDA cores in float32 FMAs, exact,
split over K inside each block, with the scales and the fp16 rounding in the same launch.

Block (i, j) computes the 64 x 32 output tile at tokens 64 i, channels 32 j (a 2 x 128 grid). Its 8 warps each take
an eighth of K (512 values) and compute the whole tile over it, each lane an 8 x 8 register tile (rows lane % 8 + 8 r,
columns lane // 8 + 4 c), so a warp needs no other warp until the end and synchronises with syncwarp only. A warp
stages 8 K values at a time in its own piece of shared memory: it loads the activation and weight words (4 int8
each; a load covers 16 rows, 8 bytes of each), the next step's while it computes the current one, and stores them
widened to float32, [k][row] (rows padded to 68 and 36 so the stores and the reads are free of bank conflicts); then
each k is 16 shared loads and 64 FMAs a lane (two k a loop trip). The products of int8 values are exact in float32
and a warp's partial sums are at most 512 * 128 * 128 = 2**23 in size, so its float32 accumulators hold the integer
result exactly (the reference accumulates exactly too). At the end the 8 warps add their tiles as int32 with
shared-memory atomics, and each output is (acc * activation scale) * weight scale in float64, rounded to float32 and
then to fp16 by the store: the reference's own operations (torch casts float64 to fp16 through float32), so the
result should match it bit for bit. numba has no tensor cores and no int8 dot product: this is 2.1 G float32 FMAs."""

import torch
from numba import cuda, float32, float64, int32

WARPS = 8  # K slices: each warp computes the whole tile over one
THREADS = 256  # 32 * WARPS
BLOCK_M = 64  # tokens per block
BLOCK_N = 32  # channels per block
TILE = 2048  # BLOCK_M * BLOCK_N
ACC = 64  # 8 x 8 outputs per lane
STEP_WORDS = 2  # int32 words (4 int8 each) of K staged per step
STEP_K = 8  # 4 * STEP_WORDS
A_STRIDE = 68  # BLOCK_M + 4: floats between a k's activation rows (conflict-free stores and reads)
W_STRIDE = 36  # BLOCK_N + 4
W_BASE = 544  # STEP_K * A_STRIDE: where a warp's weight rows start in its piece
WARP_FLOATS = 832  # STEP_K * (A_STRIDE + W_STRIDE)
STAGE_FLOATS = 6656  # WARPS * WARP_FLOATS
A_LOADS = 4  # BLOCK_M * STEP_WORDS // 32 words per lane per step
W_LOADS = 2  # BLOCK_N * STEP_WORDS // 32
INDEX_MASK = 0x7FFFFFFF  # masking an index sum with it proves it non-negative: numba drops its wraparound select
MAX_SLICE = 1024  # K values a warp may sum in float32 exactly (1024 * 128 * 128 = 2**24)


@cuda.jit(device=True)
def _byte(word, b):
    """Signed byte b (0 = lowest address) of an int32 word, as float32."""
    return float32(int32(int32(word << (24 - 8 * b)) >> 24))


@cuda.jit(max_registers=128)  # 2 blocks (16 warps) an SM
def _gemm(a_words, w_words, a_scales, w_scales, out):
    """a_words: [M, K/4] int32 (activations), w_words: [N, K/4] int32 (weights), a_scales: [M, 1] float32,
    w_scales: [1, N] float32, out: [M, N] float16."""
    stage = cuda.shared.array(STAGE_FLOATS, float32)
    total = cuda.shared.array(TILE, int32)
    tid = cuda.threadIdx.x
    warp = tid >> 5
    lane = tid & 31
    m0 = cuda.blockIdx.x * BLOCK_M
    n0 = cuda.blockIdx.y * BLOCK_N
    for e in range(tid, TILE, THREADS):
        total[e] = 0
    slice_words = a_words.shape[1] // WARPS
    steps = slice_words // STEP_WORDS
    k0 = warp * slice_words
    base = warp * WARP_FLOATS
    # staging: lane moves word lw of rows lr + 16 it
    lw = lane & 1
    lr = lane >> 1
    # compute: lane owns rows lm + 8 r and columns ln + 4 c of the tile
    lm = lane & 7
    ln = lane >> 3
    abuf = cuda.local.array(A_LOADS, int32)
    wbuf = cuda.local.array(W_LOADS, int32)
    acc = cuda.local.array(ACC, float32)
    av = cuda.local.array(8, float32)
    wv = cuda.local.array(8, float32)
    for i in range(ACC):
        acc[i] = float32(0.0)
    a_row = (m0 + lr) & INDEX_MASK
    w_row = (n0 + lr) & INDEX_MASK
    col = (k0 + lw) & INDEX_MASK
    for it in range(A_LOADS):
        abuf[it] = a_words[a_row + 16 * it, col]
    for it in range(W_LOADS):
        wbuf[it] = w_words[w_row + 16 * it, col]
    a_put = (base + 4 * lw * A_STRIDE + lr) & INDEX_MASK
    w_put = (base + W_BASE + 4 * lw * W_STRIDE + lr) & INDEX_MASK
    for s in range(steps):
        cuda.syncwarp()  # the last step's reads of this warp's piece are done
        for it in range(A_LOADS):
            word = abuf[it]
            stage[a_put + 16 * it] = _byte(word, 0)
            stage[a_put + 16 * it + A_STRIDE] = _byte(word, 1)
            stage[a_put + 16 * it + 2 * A_STRIDE] = _byte(word, 2)
            stage[a_put + 16 * it + 3 * A_STRIDE] = _byte(word, 3)
        for it in range(W_LOADS):
            word = wbuf[it]
            stage[w_put + 16 * it] = _byte(word, 0)
            stage[w_put + 16 * it + W_STRIDE] = _byte(word, 1)
            stage[w_put + 16 * it + 2 * W_STRIDE] = _byte(word, 2)
            stage[w_put + 16 * it + 3 * W_STRIDE] = _byte(word, 3)
        cuda.syncwarp()
        if s + 1 < steps:  # the next step's words, in flight during this step's FMAs
            col = (k0 + (s + 1) * STEP_WORDS + lw) & INDEX_MASK
            for it in range(A_LOADS):
                abuf[it] = a_words[a_row + 16 * it, col]
            for it in range(W_LOADS):
                wbuf[it] = w_words[w_row + 16 * it, col]
        for k in range(0, STEP_K, 2):  # two k a trip, written out: half the loop's own instructions per FMA
            a_at = (base + k * A_STRIDE + lm) & INDEX_MASK
            w_at = (base + W_BASE + k * W_STRIDE + ln) & INDEX_MASK
            for r in range(8):
                av[r] = stage[a_at + 8 * r]
            for c in range(8):
                wv[c] = stage[w_at + 4 * c]
            for r in range(8):
                for c in range(8):
                    acc[8 * r + c] += av[r] * wv[c]
            for r in range(8):
                av[r] = stage[a_at + A_STRIDE + 8 * r]
            for c in range(8):
                wv[c] = stage[w_at + W_STRIDE + 4 * c]
            for r in range(8):
                for c in range(8):
                    acc[8 * r + c] += av[r] * wv[c]
    cuda.syncthreads()  # total is zeroed
    put = (lm * BLOCK_N + ln) & INDEX_MASK
    for r in range(8):
        for c in range(8):
            cuda.atomic.add(total, put + 8 * r * BLOCK_N + 4 * c, int32(acc[8 * r + c]))
    cuda.syncthreads()
    for e in range(tid, TILE, THREADS):
        m = (m0 + (e >> 5)) & INDEX_MASK  # BLOCK_N == 32
        n = (n0 + (e & 31)) & INDEX_MASK
        # float64 products, then float32, then fp16: torch's float64 -> fp16 cast goes through float32 the same way
        out[m, n] = float32(float64(total[e]) * float64(a_scales[m, 0]) * float64(w_scales[0, n]))


_launches = {}


def solve(activations, weights, activation_scales, weight_scales):
    tokens, inner = activations.shape
    channels = weights.shape[0]
    assert tokens % BLOCK_M == 0 and channels % BLOCK_N == 0 and inner % (4 * WARPS * STEP_WORDS) == 0
    assert inner // WARPS <= MAX_SLICE and activations.dtype == torch.int8 and weights.dtype == torch.int8
    grid = (tokens // BLOCK_M, channels // BLOCK_N)
    launch = _launches.get(grid)
    if launch is None:
        launch = _launches[grid] = _gemm[grid, THREADS]
    out = torch.empty(tokens, channels, device=activations.device, dtype=torch.float16)
    launch(activations.view(torch.int32), weights.view(torch.int32), activation_scales, weight_scales, out)
    return out
