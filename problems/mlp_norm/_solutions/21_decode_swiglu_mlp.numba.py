"""numba-cuda solution for 21_decode_swiglu_mlp: both projections run on one skinny-GEMM kernel (float32
FMAs on the CUDA cores: numba has no tensor-core access) that reads the bf16 weights as raw bits, and a small kernel
applies silu(gate) * up between them.

An earlier solution widened the 407 MB of bf16 weights to float32 with torch on every call (more traffic than eager's
whole step) and then loaded one token's input per FMA. Here each weight is read once, as an int64 word of four bf16 (a
bf16's float32 value is its 16 bits shifted up), and used for all 32 tokens from registers.

`_stream_gemm` (acc[t, r] += sum over k of x[t, k] w[r, k]): a row block is 128 weight rows, 16 per warp; lane = (row
group cg 0..3, k lane kl 0..7), each thread accumulating 32 tokens x 4 rows (128 accumulators, named scalars so they
stay in registers; one block of 8 warps per SM, two warps per scheduler) over the k quads kl, kl + 8, kl + 16, ... of
its range: a warp reads 4 rows x 64 contiguous bytes per load instruction, two iterations of weights in flight per
thread. The tokens' inputs go through shared memory per 128-wide k chunk as float32 quads in complex128 slots (one
128-bit shared load gives the four k values of a weight word; the 8 k lanes read 128 consecutive bytes, one wavefront),
double-buffered, the next chunk's global loads in flight during the current one. The work, (row block, chunk) units in
row-block-major order, is cut into one contiguous range per SM, so every SM gets the same number of chunks (within
one); a range may span row blocks, and each piece of it ends by folding the 8 k lanes with a shuffle reduce-scatter and
adding its partial sums into a zeroed float32 result with atomics.

Roundings, as the reference's: `_act` rounds gate and up to bf16 (the reference's bf16 gate_up), takes silu(gate) * up
in float32 (x / (1 + exp(-x)), as torch's silu) and writes it as bf16 bits (round to nearest even); the down
projection's float32 sums become bf16 in the final torch cast.
"""

import math

import torch
from numba import complex128, cuda, float32, int32, uint32
from numba.cuda import libdevice

NUM_TOKENS = 32
HIDDEN = 3584
INTERMEDIATE = 18944
FULL_MASK = 0xFFFFFFFF

WARPS = 8
THREADS = WARPS * 32
ROWS_PER_THREAD = 4
BLOCK_ROWS = 128  # weight rows per row block: WARPS warps x 4 row groups x ROWS_PER_THREAD
CHUNK_QUADS = 32  # k quads (128 k values) per staged chunk of the 32 token rows
CHUNK_ITERS = 4  # warp iterations per chunk: 8 k lanes x one quad each
XS_BUFFERS = 2
XS_TOKENS = 32
XS_QUADS = 32
ACT_THREADS = 256

_sm_counts = {}


@cuda.jit(device=True)
def _bf16_at(quad, j):
    """float32 value of bf16 number j (0..3, from the low end) of an int64 holding four."""
    return libdevice.int_as_float(int32(((quad >> (16 * j)) & 0xFFFF) << 16))


@cuda.jit(device=True)
def _pair_bits(word):
    """An int32 word (two bf16, low one first) as the int64 bits of their two float32 values (first one low)."""
    return ((word & 0xFFFF0000) << 32) | ((word << 16) & 0xFFFFFFFF)


@cuda.jit(device=True)
def _widen(quad):
    """Four bf16 (an int64) as a complex128 slot holding their float32 values: k, k + 1 in the real part's bits,
    k + 2, k + 3 in the imaginary part's."""
    low = _pair_bits(quad & 0xFFFFFFFF)
    high = _pair_bits((quad >> 32) & 0xFFFFFFFF)
    return complex(libdevice.longlong_as_double(low), libdevice.longlong_as_double(high))


@cuda.jit(device=True)
def _widen_weights(q0, q1, q2, q3):
    """The 16 float32 weights of 4 rows x 4 k (row r's quad qr), row-major."""
    return (_bf16_at(q0, 0), _bf16_at(q0, 1), _bf16_at(q0, 2), _bf16_at(q0, 3),
            _bf16_at(q1, 0), _bf16_at(q1, 1), _bf16_at(q1, 2), _bf16_at(q1, 3),
            _bf16_at(q2, 0), _bf16_at(q2, 1), _bf16_at(q2, 2), _bf16_at(q2, 3),
            _bf16_at(q3, 0), _bf16_at(q3, 1), _bf16_at(q3, 2), _bf16_at(q3, 3))


@cuda.jit(device=True)
def _mac(a0, a1, a2, a3, slot, v):
    """One token: accumulator r += sum over j of x[k + j] * w[row r, k + j], j = 0..3 (slot: x[k .. k + 3], v: the
    16 weights from _widen_weights)."""
    low = libdevice.double_as_longlong(slot.real)
    high = libdevice.double_as_longlong(slot.imag)
    x0 = libdevice.int_as_float(int32(low))
    x1 = libdevice.int_as_float(int32(low >> 32))
    x2 = libdevice.int_as_float(int32(high))
    x3 = libdevice.int_as_float(int32(high >> 32))
    return (a0 + x0 * v[0] + x1 * v[1] + x2 * v[2] + x3 * v[3],
            a1 + x0 * v[4] + x1 * v[5] + x2 * v[6] + x3 * v[7],
            a2 + x0 * v[8] + x1 * v[9] + x2 * v[10] + x3 * v[11],
            a3 + x0 * v[12] + x1 * v[13] + x2 * v[14] + x3 * v[15])


@cuda.jit(device=True)
def _fold(low, high, upper, offset):
    """Reduce-scatter step: a lane keeps one half of a pair of values and adds its partner lane's copy of that half."""
    keep = high if upper else low
    send = low if upper else high
    return keep + cuda.shfl_xor_sync(FULL_MASK, send, offset)


@cuda.jit(device=True)
def _bf16_bits(value):
    """float32 -> bf16 bits (in the low 16 bits of the result), round to nearest even."""
    bits = libdevice.float_as_int(value)
    return (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16


@cuda.jit(device=True)
def _bf16_round(value):
    """float32 -> the float32 value of its bf16 rounding (nearest even)."""
    bits = libdevice.float_as_int(value)
    return libdevice.int_as_float(int32((bits + 0x7FFF + ((bits >> 16) & 1)) & -65536))


@cuda.jit(device=True)
def _silu_mul(gate, up):
    """bf16(silu(bf16(gate)) * bf16(up)) as bf16 bits."""
    g = _bf16_round(gate)
    u = _bf16_round(up)
    return _bf16_bits(g / (float32(1.0) + math.exp(-g)) * u)


@cuda.jit
def _stream_gemm(xin, w, acc):
    """acc[t, r] += sum over k of x[t, k] * w[r, k] (atomically; acc starts at zero), for one block per SM.
    xin: [32, K / 4] int64 words of four bf16; w: [R, K / 4] the same; acc: [32, R] float32. R % 128 == 0,
    K % 128 == 0."""
    xs = cuda.shared.array((XS_BUFFERS, XS_TOKENS, XS_QUADS), complex128)
    tid = cuda.threadIdx.x
    warp = tid // 32
    lane = tid % 32
    kl = lane % 8
    cg = lane // 8
    st = tid // XS_QUADS  # staging: this thread moves quad sq of tokens st, st + 8, ...
    sq = tid % XS_QUADS
    squ = uint32(sq)
    chunks_per_block = w.shape[1] // CHUNK_QUADS
    total = (w.shape[0] // BLOCK_ROWS) * chunks_per_block
    unit = cuda.blockIdx.x * total // cuda.gridDim.x
    unit_end = (cuda.blockIdx.x + 1) * total // cuda.gridDim.x
    while unit < unit_end:  # one piece: chunks c0 .. c0 + nchunks - 1 of a row block
        row_block = unit // chunks_per_block
        c0 = unit % chunks_per_block
        nchunks = min(chunks_per_block - c0, unit_end - unit)
        unit += nchunks
        row0 = row_block * BLOCK_ROWS + warp * (4 * ROWS_PER_THREAD) + ROWS_PER_THREAD * cg
        kq0 = c0 * CHUNK_QUADS
        iters = nchunks * CHUNK_ITERS
        # hot-loop indices are uint32 (all fit): numba then skips its negative-index fix-ups
        r0 = uint32(row0)
        r1 = uint32(row0 + 1)
        r2 = uint32(row0 + 2)
        r3 = uint32(row0 + 3)
        # the piece's first chunk of the token rows into buffer 0 (its last readers passed the last barrier)
        for j in range(4):
            xs[0, st + 8 * j, sq] = _widen(xin[uint32(st + 8 * j), uint32(kq0 + sq)])
        # weights of the first iterations, one register set per iteration in flight
        k = uint32(kq0 + 0 + kl)
        w0_0 = w[r0, k]; w0_1 = w[r1, k]
        w0_2 = w[r2, k]; w0_3 = w[r3, k]
        k = uint32(kq0 + 8 + kl)
        w1_0 = w[r0, k]; w1_1 = w[r1, k]
        w1_2 = w[r2, k]; w1_3 = w[r3, k]
        # accumulators a<t>_<r>: token t, row row0 + r
        zero = float32(0.0)
        a0_0, a0_1, a0_2, a0_3 = zero, zero, zero, zero
        a1_0, a1_1, a1_2, a1_3 = zero, zero, zero, zero
        a2_0, a2_1, a2_2, a2_3 = zero, zero, zero, zero
        a3_0, a3_1, a3_2, a3_3 = zero, zero, zero, zero
        a4_0, a4_1, a4_2, a4_3 = zero, zero, zero, zero
        a5_0, a5_1, a5_2, a5_3 = zero, zero, zero, zero
        a6_0, a6_1, a6_2, a6_3 = zero, zero, zero, zero
        a7_0, a7_1, a7_2, a7_3 = zero, zero, zero, zero
        a8_0, a8_1, a8_2, a8_3 = zero, zero, zero, zero
        a9_0, a9_1, a9_2, a9_3 = zero, zero, zero, zero
        a10_0, a10_1, a10_2, a10_3 = zero, zero, zero, zero
        a11_0, a11_1, a11_2, a11_3 = zero, zero, zero, zero
        a12_0, a12_1, a12_2, a12_3 = zero, zero, zero, zero
        a13_0, a13_1, a13_2, a13_3 = zero, zero, zero, zero
        a14_0, a14_1, a14_2, a14_3 = zero, zero, zero, zero
        a15_0, a15_1, a15_2, a15_3 = zero, zero, zero, zero
        a16_0, a16_1, a16_2, a16_3 = zero, zero, zero, zero
        a17_0, a17_1, a17_2, a17_3 = zero, zero, zero, zero
        a18_0, a18_1, a18_2, a18_3 = zero, zero, zero, zero
        a19_0, a19_1, a19_2, a19_3 = zero, zero, zero, zero
        a20_0, a20_1, a20_2, a20_3 = zero, zero, zero, zero
        a21_0, a21_1, a21_2, a21_3 = zero, zero, zero, zero
        a22_0, a22_1, a22_2, a22_3 = zero, zero, zero, zero
        a23_0, a23_1, a23_2, a23_3 = zero, zero, zero, zero
        a24_0, a24_1, a24_2, a24_3 = zero, zero, zero, zero
        a25_0, a25_1, a25_2, a25_3 = zero, zero, zero, zero
        a26_0, a26_1, a26_2, a26_3 = zero, zero, zero, zero
        a27_0, a27_1, a27_2, a27_3 = zero, zero, zero, zero
        a28_0, a28_1, a28_2, a28_3 = zero, zero, zero, zero
        a29_0, a29_1, a29_2, a29_3 = zero, zero, zero, zero
        a30_0, a30_1, a30_2, a30_3 = zero, zero, zero, zero
        a31_0, a31_1, a31_2, a31_3 = zero, zero, zero, zero
        cuda.syncthreads()

        for chunk in range(nchunks):
            buf = uint32(chunk & 1)
            nbuf = buf ^ uint32(1)
            # the next chunk (for the last one: a harmless copy of it)
            base = uint32(kq0 + min(chunk + 1, nchunks - 1) * CHUNK_QUADS + sq)
            for half in range(CHUNK_ITERS // 2):
                # tokens 16 half .. 16 half + 15 of the next chunk: global loads in flight during this part
                s0 = xin[uint32(st + 16 * half + 0), base]
                s1 = xin[uint32(st + 16 * half + 8), base]
                hb = chunk * CHUNK_ITERS + half * 2  # the half's first iteration within the piece
                more = hb + 4 <= iters  # the weights 2 iterations on are in the piece (else: no reload)
                kh = uint32(kq0 + (hb + 2) * 8 + kl)
                qh = uint32(half * 16 + kl)
                # iteration hb + 0: widen its weights, reload the set 2 iterations on
                v = _widen_weights(w0_0, w0_1, w0_2, w0_3)
                if more:
                    w0_0 = w[r0, kh]; w0_1 = w[r1, kh]
                    w0_2 = w[r2, kh]; w0_3 = w[r3, kh]
                q = qh
                a0_0, a0_1, a0_2, a0_3 = _mac(a0_0, a0_1, a0_2, a0_3, xs[buf, 0, q], v)
                a1_0, a1_1, a1_2, a1_3 = _mac(a1_0, a1_1, a1_2, a1_3, xs[buf, 1, q], v)
                a2_0, a2_1, a2_2, a2_3 = _mac(a2_0, a2_1, a2_2, a2_3, xs[buf, 2, q], v)
                a3_0, a3_1, a3_2, a3_3 = _mac(a3_0, a3_1, a3_2, a3_3, xs[buf, 3, q], v)
                a4_0, a4_1, a4_2, a4_3 = _mac(a4_0, a4_1, a4_2, a4_3, xs[buf, 4, q], v)
                a5_0, a5_1, a5_2, a5_3 = _mac(a5_0, a5_1, a5_2, a5_3, xs[buf, 5, q], v)
                a6_0, a6_1, a6_2, a6_3 = _mac(a6_0, a6_1, a6_2, a6_3, xs[buf, 6, q], v)
                a7_0, a7_1, a7_2, a7_3 = _mac(a7_0, a7_1, a7_2, a7_3, xs[buf, 7, q], v)
                a8_0, a8_1, a8_2, a8_3 = _mac(a8_0, a8_1, a8_2, a8_3, xs[buf, 8, q], v)
                a9_0, a9_1, a9_2, a9_3 = _mac(a9_0, a9_1, a9_2, a9_3, xs[buf, 9, q], v)
                a10_0, a10_1, a10_2, a10_3 = _mac(a10_0, a10_1, a10_2, a10_3, xs[buf, 10, q], v)
                a11_0, a11_1, a11_2, a11_3 = _mac(a11_0, a11_1, a11_2, a11_3, xs[buf, 11, q], v)
                a12_0, a12_1, a12_2, a12_3 = _mac(a12_0, a12_1, a12_2, a12_3, xs[buf, 12, q], v)
                a13_0, a13_1, a13_2, a13_3 = _mac(a13_0, a13_1, a13_2, a13_3, xs[buf, 13, q], v)
                a14_0, a14_1, a14_2, a14_3 = _mac(a14_0, a14_1, a14_2, a14_3, xs[buf, 14, q], v)
                a15_0, a15_1, a15_2, a15_3 = _mac(a15_0, a15_1, a15_2, a15_3, xs[buf, 15, q], v)
                a16_0, a16_1, a16_2, a16_3 = _mac(a16_0, a16_1, a16_2, a16_3, xs[buf, 16, q], v)
                a17_0, a17_1, a17_2, a17_3 = _mac(a17_0, a17_1, a17_2, a17_3, xs[buf, 17, q], v)
                a18_0, a18_1, a18_2, a18_3 = _mac(a18_0, a18_1, a18_2, a18_3, xs[buf, 18, q], v)
                a19_0, a19_1, a19_2, a19_3 = _mac(a19_0, a19_1, a19_2, a19_3, xs[buf, 19, q], v)
                a20_0, a20_1, a20_2, a20_3 = _mac(a20_0, a20_1, a20_2, a20_3, xs[buf, 20, q], v)
                a21_0, a21_1, a21_2, a21_3 = _mac(a21_0, a21_1, a21_2, a21_3, xs[buf, 21, q], v)
                a22_0, a22_1, a22_2, a22_3 = _mac(a22_0, a22_1, a22_2, a22_3, xs[buf, 22, q], v)
                a23_0, a23_1, a23_2, a23_3 = _mac(a23_0, a23_1, a23_2, a23_3, xs[buf, 23, q], v)
                a24_0, a24_1, a24_2, a24_3 = _mac(a24_0, a24_1, a24_2, a24_3, xs[buf, 24, q], v)
                a25_0, a25_1, a25_2, a25_3 = _mac(a25_0, a25_1, a25_2, a25_3, xs[buf, 25, q], v)
                a26_0, a26_1, a26_2, a26_3 = _mac(a26_0, a26_1, a26_2, a26_3, xs[buf, 26, q], v)
                a27_0, a27_1, a27_2, a27_3 = _mac(a27_0, a27_1, a27_2, a27_3, xs[buf, 27, q], v)
                a28_0, a28_1, a28_2, a28_3 = _mac(a28_0, a28_1, a28_2, a28_3, xs[buf, 28, q], v)
                a29_0, a29_1, a29_2, a29_3 = _mac(a29_0, a29_1, a29_2, a29_3, xs[buf, 29, q], v)
                a30_0, a30_1, a30_2, a30_3 = _mac(a30_0, a30_1, a30_2, a30_3, xs[buf, 30, q], v)
                a31_0, a31_1, a31_2, a31_3 = _mac(a31_0, a31_1, a31_2, a31_3, xs[buf, 31, q], v)
                # iteration hb + 1: widen its weights, reload the set 2 iterations on
                v = _widen_weights(w1_0, w1_1, w1_2, w1_3)
                if more:
                    w1_0 = w[r0, kh + uint32(8)]; w1_1 = w[r1, kh + uint32(8)]
                    w1_2 = w[r2, kh + uint32(8)]; w1_3 = w[r3, kh + uint32(8)]
                q = qh + uint32(8)
                a0_0, a0_1, a0_2, a0_3 = _mac(a0_0, a0_1, a0_2, a0_3, xs[buf, 0, q], v)
                a1_0, a1_1, a1_2, a1_3 = _mac(a1_0, a1_1, a1_2, a1_3, xs[buf, 1, q], v)
                a2_0, a2_1, a2_2, a2_3 = _mac(a2_0, a2_1, a2_2, a2_3, xs[buf, 2, q], v)
                a3_0, a3_1, a3_2, a3_3 = _mac(a3_0, a3_1, a3_2, a3_3, xs[buf, 3, q], v)
                a4_0, a4_1, a4_2, a4_3 = _mac(a4_0, a4_1, a4_2, a4_3, xs[buf, 4, q], v)
                a5_0, a5_1, a5_2, a5_3 = _mac(a5_0, a5_1, a5_2, a5_3, xs[buf, 5, q], v)
                a6_0, a6_1, a6_2, a6_3 = _mac(a6_0, a6_1, a6_2, a6_3, xs[buf, 6, q], v)
                a7_0, a7_1, a7_2, a7_3 = _mac(a7_0, a7_1, a7_2, a7_3, xs[buf, 7, q], v)
                a8_0, a8_1, a8_2, a8_3 = _mac(a8_0, a8_1, a8_2, a8_3, xs[buf, 8, q], v)
                a9_0, a9_1, a9_2, a9_3 = _mac(a9_0, a9_1, a9_2, a9_3, xs[buf, 9, q], v)
                a10_0, a10_1, a10_2, a10_3 = _mac(a10_0, a10_1, a10_2, a10_3, xs[buf, 10, q], v)
                a11_0, a11_1, a11_2, a11_3 = _mac(a11_0, a11_1, a11_2, a11_3, xs[buf, 11, q], v)
                a12_0, a12_1, a12_2, a12_3 = _mac(a12_0, a12_1, a12_2, a12_3, xs[buf, 12, q], v)
                a13_0, a13_1, a13_2, a13_3 = _mac(a13_0, a13_1, a13_2, a13_3, xs[buf, 13, q], v)
                a14_0, a14_1, a14_2, a14_3 = _mac(a14_0, a14_1, a14_2, a14_3, xs[buf, 14, q], v)
                a15_0, a15_1, a15_2, a15_3 = _mac(a15_0, a15_1, a15_2, a15_3, xs[buf, 15, q], v)
                a16_0, a16_1, a16_2, a16_3 = _mac(a16_0, a16_1, a16_2, a16_3, xs[buf, 16, q], v)
                a17_0, a17_1, a17_2, a17_3 = _mac(a17_0, a17_1, a17_2, a17_3, xs[buf, 17, q], v)
                a18_0, a18_1, a18_2, a18_3 = _mac(a18_0, a18_1, a18_2, a18_3, xs[buf, 18, q], v)
                a19_0, a19_1, a19_2, a19_3 = _mac(a19_0, a19_1, a19_2, a19_3, xs[buf, 19, q], v)
                a20_0, a20_1, a20_2, a20_3 = _mac(a20_0, a20_1, a20_2, a20_3, xs[buf, 20, q], v)
                a21_0, a21_1, a21_2, a21_3 = _mac(a21_0, a21_1, a21_2, a21_3, xs[buf, 21, q], v)
                a22_0, a22_1, a22_2, a22_3 = _mac(a22_0, a22_1, a22_2, a22_3, xs[buf, 22, q], v)
                a23_0, a23_1, a23_2, a23_3 = _mac(a23_0, a23_1, a23_2, a23_3, xs[buf, 23, q], v)
                a24_0, a24_1, a24_2, a24_3 = _mac(a24_0, a24_1, a24_2, a24_3, xs[buf, 24, q], v)
                a25_0, a25_1, a25_2, a25_3 = _mac(a25_0, a25_1, a25_2, a25_3, xs[buf, 25, q], v)
                a26_0, a26_1, a26_2, a26_3 = _mac(a26_0, a26_1, a26_2, a26_3, xs[buf, 26, q], v)
                a27_0, a27_1, a27_2, a27_3 = _mac(a27_0, a27_1, a27_2, a27_3, xs[buf, 27, q], v)
                a28_0, a28_1, a28_2, a28_3 = _mac(a28_0, a28_1, a28_2, a28_3, xs[buf, 28, q], v)
                a29_0, a29_1, a29_2, a29_3 = _mac(a29_0, a29_1, a29_2, a29_3, xs[buf, 29, q], v)
                a30_0, a30_1, a30_2, a30_3 = _mac(a30_0, a30_1, a30_2, a30_3, xs[buf, 30, q], v)
                a31_0, a31_1, a31_2, a31_3 = _mac(a31_0, a31_1, a31_2, a31_3, xs[buf, 31, q], v)
                # into the other buffer: its last readers finished before the previous barrier
                xs[nbuf, uint32(st + 16 * half + 0), squ] = _widen(s0)
                xs[nbuf, uint32(st + 16 * half + 8), squ] = _widen(s1)
            cuda.syncthreads()

        # fold the 8 k lanes: after the offsets 4, 2, 1, lane kl holds tokens 4 kl .. 4 kl + 3 in a0_* .. a3_*
        upper = (kl & 4) != 0
        a0_0 = _fold(a0_0, a16_0, upper, 4); a0_1 = _fold(a0_1, a16_1, upper, 4)
        a0_2 = _fold(a0_2, a16_2, upper, 4); a0_3 = _fold(a0_3, a16_3, upper, 4)
        a1_0 = _fold(a1_0, a17_0, upper, 4); a1_1 = _fold(a1_1, a17_1, upper, 4)
        a1_2 = _fold(a1_2, a17_2, upper, 4); a1_3 = _fold(a1_3, a17_3, upper, 4)
        a2_0 = _fold(a2_0, a18_0, upper, 4); a2_1 = _fold(a2_1, a18_1, upper, 4)
        a2_2 = _fold(a2_2, a18_2, upper, 4); a2_3 = _fold(a2_3, a18_3, upper, 4)
        a3_0 = _fold(a3_0, a19_0, upper, 4); a3_1 = _fold(a3_1, a19_1, upper, 4)
        a3_2 = _fold(a3_2, a19_2, upper, 4); a3_3 = _fold(a3_3, a19_3, upper, 4)
        a4_0 = _fold(a4_0, a20_0, upper, 4); a4_1 = _fold(a4_1, a20_1, upper, 4)
        a4_2 = _fold(a4_2, a20_2, upper, 4); a4_3 = _fold(a4_3, a20_3, upper, 4)
        a5_0 = _fold(a5_0, a21_0, upper, 4); a5_1 = _fold(a5_1, a21_1, upper, 4)
        a5_2 = _fold(a5_2, a21_2, upper, 4); a5_3 = _fold(a5_3, a21_3, upper, 4)
        a6_0 = _fold(a6_0, a22_0, upper, 4); a6_1 = _fold(a6_1, a22_1, upper, 4)
        a6_2 = _fold(a6_2, a22_2, upper, 4); a6_3 = _fold(a6_3, a22_3, upper, 4)
        a7_0 = _fold(a7_0, a23_0, upper, 4); a7_1 = _fold(a7_1, a23_1, upper, 4)
        a7_2 = _fold(a7_2, a23_2, upper, 4); a7_3 = _fold(a7_3, a23_3, upper, 4)
        a8_0 = _fold(a8_0, a24_0, upper, 4); a8_1 = _fold(a8_1, a24_1, upper, 4)
        a8_2 = _fold(a8_2, a24_2, upper, 4); a8_3 = _fold(a8_3, a24_3, upper, 4)
        a9_0 = _fold(a9_0, a25_0, upper, 4); a9_1 = _fold(a9_1, a25_1, upper, 4)
        a9_2 = _fold(a9_2, a25_2, upper, 4); a9_3 = _fold(a9_3, a25_3, upper, 4)
        a10_0 = _fold(a10_0, a26_0, upper, 4); a10_1 = _fold(a10_1, a26_1, upper, 4)
        a10_2 = _fold(a10_2, a26_2, upper, 4); a10_3 = _fold(a10_3, a26_3, upper, 4)
        a11_0 = _fold(a11_0, a27_0, upper, 4); a11_1 = _fold(a11_1, a27_1, upper, 4)
        a11_2 = _fold(a11_2, a27_2, upper, 4); a11_3 = _fold(a11_3, a27_3, upper, 4)
        a12_0 = _fold(a12_0, a28_0, upper, 4); a12_1 = _fold(a12_1, a28_1, upper, 4)
        a12_2 = _fold(a12_2, a28_2, upper, 4); a12_3 = _fold(a12_3, a28_3, upper, 4)
        a13_0 = _fold(a13_0, a29_0, upper, 4); a13_1 = _fold(a13_1, a29_1, upper, 4)
        a13_2 = _fold(a13_2, a29_2, upper, 4); a13_3 = _fold(a13_3, a29_3, upper, 4)
        a14_0 = _fold(a14_0, a30_0, upper, 4); a14_1 = _fold(a14_1, a30_1, upper, 4)
        a14_2 = _fold(a14_2, a30_2, upper, 4); a14_3 = _fold(a14_3, a30_3, upper, 4)
        a15_0 = _fold(a15_0, a31_0, upper, 4); a15_1 = _fold(a15_1, a31_1, upper, 4)
        a15_2 = _fold(a15_2, a31_2, upper, 4); a15_3 = _fold(a15_3, a31_3, upper, 4)
        upper = (kl & 2) != 0
        a0_0 = _fold(a0_0, a8_0, upper, 2); a0_1 = _fold(a0_1, a8_1, upper, 2)
        a0_2 = _fold(a0_2, a8_2, upper, 2); a0_3 = _fold(a0_3, a8_3, upper, 2)
        a1_0 = _fold(a1_0, a9_0, upper, 2); a1_1 = _fold(a1_1, a9_1, upper, 2)
        a1_2 = _fold(a1_2, a9_2, upper, 2); a1_3 = _fold(a1_3, a9_3, upper, 2)
        a2_0 = _fold(a2_0, a10_0, upper, 2); a2_1 = _fold(a2_1, a10_1, upper, 2)
        a2_2 = _fold(a2_2, a10_2, upper, 2); a2_3 = _fold(a2_3, a10_3, upper, 2)
        a3_0 = _fold(a3_0, a11_0, upper, 2); a3_1 = _fold(a3_1, a11_1, upper, 2)
        a3_2 = _fold(a3_2, a11_2, upper, 2); a3_3 = _fold(a3_3, a11_3, upper, 2)
        a4_0 = _fold(a4_0, a12_0, upper, 2); a4_1 = _fold(a4_1, a12_1, upper, 2)
        a4_2 = _fold(a4_2, a12_2, upper, 2); a4_3 = _fold(a4_3, a12_3, upper, 2)
        a5_0 = _fold(a5_0, a13_0, upper, 2); a5_1 = _fold(a5_1, a13_1, upper, 2)
        a5_2 = _fold(a5_2, a13_2, upper, 2); a5_3 = _fold(a5_3, a13_3, upper, 2)
        a6_0 = _fold(a6_0, a14_0, upper, 2); a6_1 = _fold(a6_1, a14_1, upper, 2)
        a6_2 = _fold(a6_2, a14_2, upper, 2); a6_3 = _fold(a6_3, a14_3, upper, 2)
        a7_0 = _fold(a7_0, a15_0, upper, 2); a7_1 = _fold(a7_1, a15_1, upper, 2)
        a7_2 = _fold(a7_2, a15_2, upper, 2); a7_3 = _fold(a7_3, a15_3, upper, 2)
        upper = (kl & 1) != 0
        a0_0 = _fold(a0_0, a4_0, upper, 1); a0_1 = _fold(a0_1, a4_1, upper, 1)
        a0_2 = _fold(a0_2, a4_2, upper, 1); a0_3 = _fold(a0_3, a4_3, upper, 1)
        a1_0 = _fold(a1_0, a5_0, upper, 1); a1_1 = _fold(a1_1, a5_1, upper, 1)
        a1_2 = _fold(a1_2, a5_2, upper, 1); a1_3 = _fold(a1_3, a5_3, upper, 1)
        a2_0 = _fold(a2_0, a6_0, upper, 1); a2_1 = _fold(a2_1, a6_1, upper, 1)
        a2_2 = _fold(a2_2, a6_2, upper, 1); a2_3 = _fold(a2_3, a6_3, upper, 1)
        a3_0 = _fold(a3_0, a7_0, upper, 1); a3_1 = _fold(a3_1, a7_1, upper, 1)
        a3_2 = _fold(a3_2, a7_2, upper, 1); a3_3 = _fold(a3_3, a7_3, upper, 1)
        t0 = 4 * kl
        cuda.atomic.add(acc, (t0 + 0, row0 + 0), a0_0)
        cuda.atomic.add(acc, (t0 + 0, row0 + 1), a0_1)
        cuda.atomic.add(acc, (t0 + 0, row0 + 2), a0_2)
        cuda.atomic.add(acc, (t0 + 0, row0 + 3), a0_3)
        cuda.atomic.add(acc, (t0 + 1, row0 + 0), a1_0)
        cuda.atomic.add(acc, (t0 + 1, row0 + 1), a1_1)
        cuda.atomic.add(acc, (t0 + 1, row0 + 2), a1_2)
        cuda.atomic.add(acc, (t0 + 1, row0 + 3), a1_3)
        cuda.atomic.add(acc, (t0 + 2, row0 + 0), a2_0)
        cuda.atomic.add(acc, (t0 + 2, row0 + 1), a2_1)
        cuda.atomic.add(acc, (t0 + 2, row0 + 2), a2_2)
        cuda.atomic.add(acc, (t0 + 2, row0 + 3), a2_3)
        cuda.atomic.add(acc, (t0 + 3, row0 + 0), a3_0)
        cuda.atomic.add(acc, (t0 + 3, row0 + 1), a3_1)
        cuda.atomic.add(acc, (t0 + 3, row0 + 2), a3_2)
        cuda.atomic.add(acc, (t0 + 3, row0 + 3), a3_3)


@cuda.jit
def _act(gate_up, hidden):
    """hidden[t, p] = the bf16 pair (2p, 2p + 1) of silu(gate) * up; gate_up: [32, 2 I] float32, hidden: [32, I / 2]
    int32."""
    i = cuda.grid(1)
    pairs = hidden.shape[1]
    if i < hidden.shape[0] * pairs:
        t = i // pairs
        c = 2 * (i % pairs)
        half = 2 * pairs
        low = _silu_mul(gate_up[t, c], gate_up[t, half + c])
        high = _silu_mul(gate_up[t, c + 1], gate_up[t, half + c + 1])
        hidden[t, i % pairs] = (low & 0xFFFF) | (high << 16)


def _sm_count(device):
    if device not in _sm_counts:
        _sm_counts[device] = torch.cuda.get_device_properties(device).multi_processor_count
    return _sm_counts[device]


def solve(x, gate_up_weight, down_weight):
    x, gate_up_weight, down_weight = x.contiguous(), gate_up_weight.contiguous(), down_weight.contiguous()
    assert tuple(x.shape) == (NUM_TOKENS, HIDDEN) and tuple(down_weight.shape) == (HIDDEN, INTERMEDIATE)
    assert tuple(gate_up_weight.shape) == (2 * INTERMEDIATE, HIDDEN)
    device = x.device
    sms = _sm_count(device)
    # both projections' float32 sums, zeroed by one fill
    sums = torch.zeros(NUM_TOKENS * (2 * INTERMEDIATE + HIDDEN), device=device, dtype=torch.float32)
    gate_up = sums[:NUM_TOKENS * 2 * INTERMEDIATE].view(NUM_TOKENS, 2 * INTERMEDIATE)
    down = sums[NUM_TOKENS * 2 * INTERMEDIATE:].view(NUM_TOKENS, HIDDEN)
    _stream_gemm[sms, THREADS](x.view(torch.int64), gate_up_weight.view(torch.int64), gate_up)
    hidden = torch.empty(NUM_TOKENS, INTERMEDIATE, device=device, dtype=torch.bfloat16)
    count = NUM_TOKENS * INTERMEDIATE // 2
    _act[(count + ACT_THREADS - 1) // ACT_THREADS, ACT_THREADS](gate_up, hidden.view(torch.int32))
    _stream_gemm[sms, THREADS](hidden.view(torch.int64), down_weight.view(torch.int64), down)
    return down.to(torch.bfloat16)  # the reference's bf16 output
