"""numba-cuda solution for 05_int8_w8a8_gemm: a register-tiled int8 GEMM on the CUDA cores with the dp4a instruction
(four int8 products added to an int32 in one instruction), exact, split over K inside each block, with the scales
and the fp16 rounding in the same launch.

numba exposes no dp4a, so a small numba intrinsic emits it: `dp4a.s32.s32` as inline PTX through llvmlite, the way
numba-cuda itself lowers activemask, nanosleep and its fp16 casts. Everything else is v1's layout. Block (i, j)
computes the 64 x 32 output tile at tokens 64 i, channels 32 j (a 2 x 128 grid). Its 8 warps each take an eighth of
K (512 values, 128 words of 4 int8) and compute the whole tile over it, each lane an 8 x 8 register tile of int32
accumulators (rows lane % 8 + 8 r, columns lane // 8 + 4 c), so a warp needs no other warp until the end and
synchronises with syncwarp only. A warp stages 8 words (32 K values) a step in its own piece of shared memory, as
the words themselves, [word][row] (rows padded to 68 and 36: conflict-free stores and reads), loading the next
step's words while it computes the current one; each word step is then 16 shared loads and 64 dp4a a lane, 256
multiply-adds. The sums are exact int32 (|sum| <= 4096 * 128 * 128 = 2**26). At the end the 8 warps add their
tiles with shared-memory atomics, and each output is (acc * activation scale) * weight scale in float64, rounded to
float32 and then to fp16 by the store: the reference's own operations (torch casts float64 to fp16 through
float32), so the result should match it bit for bit."""

import torch
from llvmlite import ir
from numba import cuda, float32, float64, int32

try:  # numba-cuda with its own type system (the GPU image's)
    from numba.cuda import types
    from numba.cuda.extending import intrinsic
    from numba.cuda.typing import signature
    types.int32  # before that type system, numba.cuda.types held only CUDA's own types
except (ImportError, AttributeError):  # older numba-cuda or numba: the CUDA target shares numba's core types
    from numba.core import types
    from numba.core.typing import signature
    from numba.extending import intrinsic

WARPS = 8  # K slices: each warp computes the whole tile over one
THREADS = 256  # 32 * WARPS
BLOCK_M = 64  # tokens per block
BLOCK_N = 32  # channels per block
TILE = 2048  # BLOCK_M * BLOCK_N
ACC = 64  # 8 x 8 outputs per lane
STEP_WORDS = 8  # int32 words (4 int8 each) of K staged per step
A_STRIDE = 68  # BLOCK_M + 4: words between a word column's activation rows (conflict-free stores and reads)
W_STRIDE = 36  # BLOCK_N + 4
W_BASE = 544  # STEP_WORDS * A_STRIDE: where a warp's weight rows start in its piece
WARP_WORDS = 832  # STEP_WORDS * (A_STRIDE + W_STRIDE)
STAGE_WORDS = 6656  # WARPS * WARP_WORDS
A_LOADS = 16  # BLOCK_M * STEP_WORDS // 32 words per lane per step
W_LOADS = 8  # BLOCK_N * STEP_WORDS // 32
INDEX_MASK = 0x7FFFFFFF  # masking an index sum with it proves it non-negative: numba drops its wraparound select


@intrinsic
def _dp4a(typingctx, a, b, c):
    """c + the dot product of a's and b's four signed bytes (int32 in, int32 out): PTX dp4a.s32.s32."""
    sig = signature(types.int32, a, b, c)

    def codegen(context, builder, signature_, args):
        values = [context.cast(builder, value, argty, types.int32) for value, argty in zip(args, signature_.args)]
        i32 = ir.IntType(32)
        asm = ir.InlineAsm(ir.FunctionType(i32, [i32, i32, i32]), "dp4a.s32.s32 $0, $1, $2, $3;", "=r,r,r,r")
        return builder.call(asm, values)

    return sig, codegen


@cuda.jit(max_registers=128)  # 2 blocks (16 warps) an SM
def _gemm(a_words, w_words, a_scales, w_scales, out):
    """a_words: [M, K/4] int32 (activations), w_words: [N, K/4] int32 (weights), a_scales: [M, 1] float32,
    w_scales: [1, N] float32, out: [M, N] float16."""
    stage = cuda.shared.array(STAGE_WORDS, int32)
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
    base = warp * WARP_WORDS
    # staging: lane moves word lw of rows lr + 4 it
    lw = lane & 7
    lr = lane >> 3
    # compute: lane owns rows lm + 8 r and columns ln + 4 c of the tile
    lm = lane & 7
    ln = lane >> 3
    abuf = cuda.local.array(A_LOADS, int32)
    wbuf = cuda.local.array(W_LOADS, int32)
    acc = cuda.local.array(ACC, int32)
    av = cuda.local.array(8, int32)
    wv = cuda.local.array(8, int32)
    for i in range(ACC):
        acc[i] = 0
    a_row = (m0 + lr) & INDEX_MASK
    w_row = (n0 + lr) & INDEX_MASK
    col = (k0 + lw) & INDEX_MASK
    for it in range(A_LOADS):
        abuf[it] = a_words[a_row + 4 * it, col]
    for it in range(W_LOADS):
        wbuf[it] = w_words[w_row + 4 * it, col]
    a_put = (base + lw * A_STRIDE + lr) & INDEX_MASK
    w_put = (base + W_BASE + lw * W_STRIDE + lr) & INDEX_MASK
    for s in range(steps):
        cuda.syncwarp()  # the last step's reads of this warp's piece are done
        for it in range(A_LOADS):
            stage[a_put + 4 * it] = abuf[it]
        for it in range(W_LOADS):
            stage[w_put + 4 * it] = wbuf[it]
        cuda.syncwarp()
        if s + 1 < steps:  # the next step's words, in flight during this step's dp4a
            col = (k0 + (s + 1) * STEP_WORDS + lw) & INDEX_MASK
            for it in range(A_LOADS):
                abuf[it] = a_words[a_row + 4 * it, col]
            for it in range(W_LOADS):
                wbuf[it] = w_words[w_row + 4 * it, col]
        for kw in range(STEP_WORDS):
            a_at = (base + kw * A_STRIDE + lm) & INDEX_MASK
            w_at = (base + W_BASE + kw * W_STRIDE + ln) & INDEX_MASK
            for r in range(8):
                av[r] = stage[a_at + 8 * r]
            for c in range(8):
                wv[c] = stage[w_at + 4 * c]
            for r in range(8):
                for c in range(8):
                    acc[8 * r + c] = _dp4a(av[r], wv[c], acc[8 * r + c])
    cuda.syncthreads()  # total is zeroed
    put = (lm * BLOCK_N + ln) & INDEX_MASK
    for r in range(8):
        for c in range(8):
            cuda.atomic.add(total, put + 8 * r * BLOCK_N + 4 * c, acc[8 * r + c])
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
    assert activations.dtype == torch.int8 and weights.dtype == torch.int8
    grid = (tokens // BLOCK_M, channels // BLOCK_N)
    launch = _launches.get(grid)
    if launch is None:
        launch = _launches[grid] = _gemm[grid, THREADS]
    out = torch.empty(tokens, channels, device=activations.device, dtype=torch.float16)
    launch(activations.view(torch.int32), weights.view(torch.int32), activation_scales, weight_scales, out)
    return out
