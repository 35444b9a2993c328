"""numba-cuda solution for 25_mixtral_grouped_expert_gemm: a shared-memory tiled grouped GEMM in
float32 on the CUDA cores (numba has no tensor-core access), reading the bf16 inputs as raw bits.

An earlier solution widened both inputs to float32 with torch on every call (~1.9 GB of traffic), staged 16-wide k
tiles whose reads hit 8-way bank conflicts, and kept 4 x 4 outputs per thread. Here: 128 x 128 output tiles, 256
threads, 8 x 8 outputs per thread (64 accumulators, named scalars so they stay in registers). A block's row tile is
mapped to (expert, tile within the expert's rows) by walking the expert offsets, so tiles never straddle two experts;
rows past a segment's end load a copy of its last row and store nothing; blocks past the last tile exit at once.

Per 16-wide k step both tiles are loaded as int64 words of four bf16 (a bf16's float32 value is its bits shifted up
16), widened once, and stored in shared memory as complex128 slots holding four float32 (one 128-bit shared load gives
four k values), rows padded to 5 slots so the reads are conflict-free (a warp reads 4 rows of A and 8 columns of B,
each 16 bytes). The next step's global loads are in flight in registers while the current step is computed (double-
buffered shared tiles, one barrier per step). Per slot pair a thread does 4 FMAs, 256 per 16 shared loads. The float32
sums are rounded to bf16 (nearest even) in the kernel and stored as bf16 bits: the reference's bf16 output.

The registers are capped at 128 per thread, so two blocks (16 warps) share an SM instead of one (8 warps): more warps
to hide latency, for ~3% more instructions per step (a few address registers reloaded from local memory).
"""

import torch
from numba import complex128, cuda, float32, int32, uint32
from numba.cuda import libdevice

NUM_EXPERTS = 8
TILE = 128
THREADS = 256
K_QUADS = 4  # k quads (16 k values) per step
SLOTS_PADDED = 5  # shared row length in slots: K_QUADS + 1 (conflict-free reads)
BUFFERS = 2


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
def _unpack(slot):
    """The four float32 of a slot."""
    low = libdevice.double_as_longlong(slot.real)
    high = libdevice.double_as_longlong(slot.imag)
    return (libdevice.int_as_float(int32(low)), libdevice.int_as_float(int32(low >> 32)),
            libdevice.int_as_float(int32(high)), libdevice.int_as_float(int32(high >> 32)))


@cuda.jit(device=True)
def _dot4(acc, a, b):
    return acc + a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3]


@cuda.jit(device=True)
def _row(c0, c1, c2, c3, c4, c5, c6, c7, a_slot, b0, b1, b2, b3, b4, b5, b6, b7):
    """One output row of the thread: c_j += (4 k values of A's row) . (4 k values of B's column j)."""
    a = _unpack(a_slot)
    return (_dot4(c0, a, _unpack(b0)), _dot4(c1, a, _unpack(b1)), _dot4(c2, a, _unpack(b2)),
            _dot4(c3, a, _unpack(b3)), _dot4(c4, a, _unpack(b4)), _dot4(c5, a, _unpack(b5)),
            _dot4(c6, a, _unpack(b6)), _dot4(c7, a, _unpack(b7)))


@cuda.jit(device=True)
def _bf16_bits(value):
    """float32 -> bf16 bits (in the low 16 bits of the result), round to nearest even."""
    bits = libdevice.float_as_int(value)
    return (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16


@cuda.jit(max_registers=128)
def _grouped_gemm(act, w, offsets, out):
    """out[r, n] = bf16(sum_k act[r, k] * w[e, n, k]) for the rows r of expert e.
    act: [R, K / 4] int64 (four bf16 each), w: [E, N, K / 4] int64, offsets: [E + 1] int32, out: [R, N] int16 (bf16
    bits). N % 128 == 0, K % 16 == 0."""
    a_tile = cuda.shared.array((BUFFERS, TILE, SLOTS_PADDED), complex128)
    b_tile = cuda.shared.array((BUFFERS, TILE, SLOTS_PADDED), complex128)
    # which expert, and which of its row tiles, this block owns
    tile = cuda.blockIdx.y
    expert = -1
    start = 0
    end = 0
    for e in range(NUM_EXPERTS):
        count = offsets[e + 1] - offsets[e]
        tiles = (count + TILE - 1) // TILE
        if expert < 0 and tile < tiles:
            expert = e
            start = offsets[e] + tile * TILE
            end = offsets[e + 1]
        if expert < 0:
            tile -= tiles
    if expert < 0:
        return  # the whole block: no barrier has been reached
    col0 = cuda.blockIdx.x * TILE
    tid = cuda.threadIdx.x
    warp = tid // 32
    lane = tid % 32
    row_base = (warp // 2) * 32 + lane // 8  # this thread's rows: row_base + 4 i, i = 0..7 (tile-relative)
    col_base = (warp % 2) * 64 + lane % 8  # its columns: col_base + 8 j, j = 0..7
    # staging: this thread moves slots (srow, sq) and (srow + 64, sq) of both tiles
    srow = uint32(tid // K_QUADS)
    sq = uint32(tid % K_QUADS)
    srow_hi = srow + uint32(64)
    ra = uint32(row_base)  # shared-memory indices as uint32: numba then skips its negative-index fix-ups
    cb = uint32(col_base)
    a_row0 = uint32(min(start + srow, end - 1))  # rows past the expert's end: a copy of its last row
    a_row1 = uint32(min(start + srow + 64, end - 1))
    e_u = uint32(expert)
    b_row0 = uint32(col0 + srow)
    b_row1 = uint32(col0 + srow + 64)
    steps = act.shape[1] // K_QUADS
    k = uint32(sq)
    a_tile[0, srow, sq] = _widen(act[a_row0, k])
    a_tile[0, srow_hi, sq] = _widen(act[a_row1, k])
    b_tile[0, srow, sq] = _widen(w[e_u, b_row0, k])
    b_tile[0, srow_hi, sq] = _widen(w[e_u, b_row1, k])
    zero = float32(0.0)
    c00, c01, c02, c03, c04, c05, c06, c07 = zero, zero, zero, zero, zero, zero, zero, zero
    c10, c11, c12, c13, c14, c15, c16, c17 = zero, zero, zero, zero, zero, zero, zero, zero
    c20, c21, c22, c23, c24, c25, c26, c27 = zero, zero, zero, zero, zero, zero, zero, zero
    c30, c31, c32, c33, c34, c35, c36, c37 = zero, zero, zero, zero, zero, zero, zero, zero
    c40, c41, c42, c43, c44, c45, c46, c47 = zero, zero, zero, zero, zero, zero, zero, zero
    c50, c51, c52, c53, c54, c55, c56, c57 = zero, zero, zero, zero, zero, zero, zero, zero
    c60, c61, c62, c63, c64, c65, c66, c67 = zero, zero, zero, zero, zero, zero, zero, zero
    c70, c71, c72, c73, c74, c75, c76, c77 = zero, zero, zero, zero, zero, zero, zero, zero
    cuda.syncthreads()

    for step in range(steps):
        buf = uint32(step & 1)
        # the next step's slots: global loads in flight while this step is computed (the last: a harmless copy)
        k = uint32(min(step + 1, steps - 1) * K_QUADS) + sq
        na0 = act[a_row0, k]; na1 = act[a_row1, k]; nb0 = w[e_u, b_row0, k]; nb1 = w[e_u, b_row1, k]
        # k values 4 0 .. 4 0 + 3 of the step
        q = uint32(0)
        b0 = b_tile[buf, cb + uint32(0), q]; b1 = b_tile[buf, cb + uint32(8), q]
        b2 = b_tile[buf, cb + uint32(16), q]; b3 = b_tile[buf, cb + uint32(24), q]
        b4 = b_tile[buf, cb + uint32(32), q]; b5 = b_tile[buf, cb + uint32(40), q]
        b6 = b_tile[buf, cb + uint32(48), q]; b7 = b_tile[buf, cb + uint32(56), q]
        a = a_tile[buf, ra + uint32(0), q]
        c00, c01, c02, c03, c04, c05, c06, c07 = _row(c00, c01, c02, c03, c04, c05, c06, c07, a,
            b0, b1, b2, b3, b4, b5, b6, b7)
        a = a_tile[buf, ra + uint32(4), q]
        c10, c11, c12, c13, c14, c15, c16, c17 = _row(c10, c11, c12, c13, c14, c15, c16, c17, a,
            b0, b1, b2, b3, b4, b5, b6, b7)
        a = a_tile[buf, ra + uint32(8), q]
        c20, c21, c22, c23, c24, c25, c26, c27 = _row(c20, c21, c22, c23, c24, c25, c26, c27, a,
            b0, b1, b2, b3, b4, b5, b6, b7)
        a = a_tile[buf, ra + uint32(12), q]
        c30, c31, c32, c33, c34, c35, c36, c37 = _row(c30, c31, c32, c33, c34, c35, c36, c37, a,
            b0, b1, b2, b3, b4, b5, b6, b7)
        a = a_tile[buf, ra + uint32(16), q]
        c40, c41, c42, c43, c44, c45, c46, c47 = _row(c40, c41, c42, c43, c44, c45, c46, c47, a,
            b0, b1, b2, b3, b4, b5, b6, b7)
        a = a_tile[buf, ra + uint32(20), q]
        c50, c51, c52, c53, c54, c55, c56, c57 = _row(c50, c51, c52, c53, c54, c55, c56, c57, a,
            b0, b1, b2, b3, b4, b5, b6, b7)
        a = a_tile[buf, ra + uint32(24), q]
        c60, c61, c62, c63, c64, c65, c66, c67 = _row(c60, c61, c62, c63, c64, c65, c66, c67, a,
            b0, b1, b2, b3, b4, b5, b6, b7)
        a = a_tile[buf, ra + uint32(28), q]
        c70, c71, c72, c73, c74, c75, c76, c77 = _row(c70, c71, c72, c73, c74, c75, c76, c77, a,
            b0, b1, b2, b3, b4, b5, b6, b7)
        # k values 4 1 .. 4 1 + 3 of the step
        q = uint32(1)
        b0 = b_tile[buf, cb + uint32(0), q]; b1 = b_tile[buf, cb + uint32(8), q]
        b2 = b_tile[buf, cb + uint32(16), q]; b3 = b_tile[buf, cb + uint32(24), q]
        b4 = b_tile[buf, cb + uint32(32), q]; b5 = b_tile[buf, cb + uint32(40), q]
        b6 = b_tile[buf, cb + uint32(48), q]; b7 = b_tile[buf, cb + uint32(56), q]
        a = a_tile[buf, ra + uint32(0), q]
        c00, c01, c02, c03, c04, c05, c06, c07 = _row(c00, c01, c02, c03, c04, c05, c06, c07, a,
            b0, b1, b2, b3, b4, b5, b6, b7)
        a = a_tile[buf, ra + uint32(4), q]
        c10, c11, c12, c13, c14, c15, c16, c17 = _row(c10, c11, c12, c13, c14, c15, c16, c17, a,
            b0, b1, b2, b3, b4, b5, b6, b7)
        a = a_tile[buf, ra + uint32(8), q]
        c20, c21, c22, c23, c24, c25, c26, c27 = _row(c20, c21, c22, c23, c24, c25, c26, c27, a,
            b0, b1, b2, b3, b4, b5, b6, b7)
        a = a_tile[buf, ra + uint32(12), q]
        c30, c31, c32, c33, c34, c35, c36, c37 = _row(c30, c31, c32, c33, c34, c35, c36, c37, a,
            b0, b1, b2, b3, b4, b5, b6, b7)
        a = a_tile[buf, ra + uint32(16), q]
        c40, c41, c42, c43, c44, c45, c46, c47 = _row(c40, c41, c42, c43, c44, c45, c46, c47, a,
            b0, b1, b2, b3, b4, b5, b6, b7)
        a = a_tile[buf, ra + uint32(20), q]
        c50, c51, c52, c53, c54, c55, c56, c57 = _row(c50, c51, c52, c53, c54, c55, c56, c57, a,
            b0, b1, b2, b3, b4, b5, b6, b7)
        a = a_tile[buf, ra + uint32(24), q]
        c60, c61, c62, c63, c64, c65, c66, c67 = _row(c60, c61, c62, c63, c64, c65, c66, c67, a,
            b0, b1, b2, b3, b4, b5, b6, b7)
        a = a_tile[buf, ra + uint32(28), q]
        c70, c71, c72, c73, c74, c75, c76, c77 = _row(c70, c71, c72, c73, c74, c75, c76, c77, a,
            b0, b1, b2, b3, b4, b5, b6, b7)
        # k values 4 2 .. 4 2 + 3 of the step
        q = uint32(2)
        b0 = b_tile[buf, cb + uint32(0), q]; b1 = b_tile[buf, cb + uint32(8), q]
        b2 = b_tile[buf, cb + uint32(16), q]; b3 = b_tile[buf, cb + uint32(24), q]
        b4 = b_tile[buf, cb + uint32(32), q]; b5 = b_tile[buf, cb + uint32(40), q]
        b6 = b_tile[buf, cb + uint32(48), q]; b7 = b_tile[buf, cb + uint32(56), q]
        a = a_tile[buf, ra + uint32(0), q]
        c00, c01, c02, c03, c04, c05, c06, c07 = _row(c00, c01, c02, c03, c04, c05, c06, c07, a,
            b0, b1, b2, b3, b4, b5, b6, b7)
        a = a_tile[buf, ra + uint32(4), q]
        c10, c11, c12, c13, c14, c15, c16, c17 = _row(c10, c11, c12, c13, c14, c15, c16, c17, a,
            b0, b1, b2, b3, b4, b5, b6, b7)
        a = a_tile[buf, ra + uint32(8), q]
        c20, c21, c22, c23, c24, c25, c26, c27 = _row(c20, c21, c22, c23, c24, c25, c26, c27, a,
            b0, b1, b2, b3, b4, b5, b6, b7)
        a = a_tile[buf, ra + uint32(12), q]
        c30, c31, c32, c33, c34, c35, c36, c37 = _row(c30, c31, c32, c33, c34, c35, c36, c37, a,
            b0, b1, b2, b3, b4, b5, b6, b7)
        a = a_tile[buf, ra + uint32(16), q]
        c40, c41, c42, c43, c44, c45, c46, c47 = _row(c40, c41, c42, c43, c44, c45, c46, c47, a,
            b0, b1, b2, b3, b4, b5, b6, b7)
        a = a_tile[buf, ra + uint32(20), q]
        c50, c51, c52, c53, c54, c55, c56, c57 = _row(c50, c51, c52, c53, c54, c55, c56, c57, a,
            b0, b1, b2, b3, b4, b5, b6, b7)
        a = a_tile[buf, ra + uint32(24), q]
        c60, c61, c62, c63, c64, c65, c66, c67 = _row(c60, c61, c62, c63, c64, c65, c66, c67, a,
            b0, b1, b2, b3, b4, b5, b6, b7)
        a = a_tile[buf, ra + uint32(28), q]
        c70, c71, c72, c73, c74, c75, c76, c77 = _row(c70, c71, c72, c73, c74, c75, c76, c77, a,
            b0, b1, b2, b3, b4, b5, b6, b7)
        # k values 4 3 .. 4 3 + 3 of the step
        q = uint32(3)
        b0 = b_tile[buf, cb + uint32(0), q]; b1 = b_tile[buf, cb + uint32(8), q]
        b2 = b_tile[buf, cb + uint32(16), q]; b3 = b_tile[buf, cb + uint32(24), q]
        b4 = b_tile[buf, cb + uint32(32), q]; b5 = b_tile[buf, cb + uint32(40), q]
        b6 = b_tile[buf, cb + uint32(48), q]; b7 = b_tile[buf, cb + uint32(56), q]
        a = a_tile[buf, ra + uint32(0), q]
        c00, c01, c02, c03, c04, c05, c06, c07 = _row(c00, c01, c02, c03, c04, c05, c06, c07, a,
            b0, b1, b2, b3, b4, b5, b6, b7)
        a = a_tile[buf, ra + uint32(4), q]
        c10, c11, c12, c13, c14, c15, c16, c17 = _row(c10, c11, c12, c13, c14, c15, c16, c17, a,
            b0, b1, b2, b3, b4, b5, b6, b7)
        a = a_tile[buf, ra + uint32(8), q]
        c20, c21, c22, c23, c24, c25, c26, c27 = _row(c20, c21, c22, c23, c24, c25, c26, c27, a,
            b0, b1, b2, b3, b4, b5, b6, b7)
        a = a_tile[buf, ra + uint32(12), q]
        c30, c31, c32, c33, c34, c35, c36, c37 = _row(c30, c31, c32, c33, c34, c35, c36, c37, a,
            b0, b1, b2, b3, b4, b5, b6, b7)
        a = a_tile[buf, ra + uint32(16), q]
        c40, c41, c42, c43, c44, c45, c46, c47 = _row(c40, c41, c42, c43, c44, c45, c46, c47, a,
            b0, b1, b2, b3, b4, b5, b6, b7)
        a = a_tile[buf, ra + uint32(20), q]
        c50, c51, c52, c53, c54, c55, c56, c57 = _row(c50, c51, c52, c53, c54, c55, c56, c57, a,
            b0, b1, b2, b3, b4, b5, b6, b7)
        a = a_tile[buf, ra + uint32(24), q]
        c60, c61, c62, c63, c64, c65, c66, c67 = _row(c60, c61, c62, c63, c64, c65, c66, c67, a,
            b0, b1, b2, b3, b4, b5, b6, b7)
        a = a_tile[buf, ra + uint32(28), q]
        c70, c71, c72, c73, c74, c75, c76, c77 = _row(c70, c71, c72, c73, c74, c75, c76, c77, a,
            b0, b1, b2, b3, b4, b5, b6, b7)
        # into the other buffers: their last readers finished before the previous barrier
        nbuf = buf ^ uint32(1)
        a_tile[nbuf, srow, sq] = _widen(na0); a_tile[nbuf, srow_hi, sq] = _widen(na1)
        b_tile[nbuf, srow, sq] = _widen(nb0); b_tile[nbuf, srow_hi, sq] = _widen(nb1)
        cuda.syncthreads()

    # round to bf16 and store the rows of this expert
    col = col0 + col_base
    row = start + row_base + 0
    if row < end:
        out[row, col + 0] = _bf16_bits(c00); out[row, col + 8] = _bf16_bits(c01)
        out[row, col + 16] = _bf16_bits(c02); out[row, col + 24] = _bf16_bits(c03)
        out[row, col + 32] = _bf16_bits(c04); out[row, col + 40] = _bf16_bits(c05)
        out[row, col + 48] = _bf16_bits(c06); out[row, col + 56] = _bf16_bits(c07)
    row = start + row_base + 4
    if row < end:
        out[row, col + 0] = _bf16_bits(c10); out[row, col + 8] = _bf16_bits(c11)
        out[row, col + 16] = _bf16_bits(c12); out[row, col + 24] = _bf16_bits(c13)
        out[row, col + 32] = _bf16_bits(c14); out[row, col + 40] = _bf16_bits(c15)
        out[row, col + 48] = _bf16_bits(c16); out[row, col + 56] = _bf16_bits(c17)
    row = start + row_base + 8
    if row < end:
        out[row, col + 0] = _bf16_bits(c20); out[row, col + 8] = _bf16_bits(c21)
        out[row, col + 16] = _bf16_bits(c22); out[row, col + 24] = _bf16_bits(c23)
        out[row, col + 32] = _bf16_bits(c24); out[row, col + 40] = _bf16_bits(c25)
        out[row, col + 48] = _bf16_bits(c26); out[row, col + 56] = _bf16_bits(c27)
    row = start + row_base + 12
    if row < end:
        out[row, col + 0] = _bf16_bits(c30); out[row, col + 8] = _bf16_bits(c31)
        out[row, col + 16] = _bf16_bits(c32); out[row, col + 24] = _bf16_bits(c33)
        out[row, col + 32] = _bf16_bits(c34); out[row, col + 40] = _bf16_bits(c35)
        out[row, col + 48] = _bf16_bits(c36); out[row, col + 56] = _bf16_bits(c37)
    row = start + row_base + 16
    if row < end:
        out[row, col + 0] = _bf16_bits(c40); out[row, col + 8] = _bf16_bits(c41)
        out[row, col + 16] = _bf16_bits(c42); out[row, col + 24] = _bf16_bits(c43)
        out[row, col + 32] = _bf16_bits(c44); out[row, col + 40] = _bf16_bits(c45)
        out[row, col + 48] = _bf16_bits(c46); out[row, col + 56] = _bf16_bits(c47)
    row = start + row_base + 20
    if row < end:
        out[row, col + 0] = _bf16_bits(c50); out[row, col + 8] = _bf16_bits(c51)
        out[row, col + 16] = _bf16_bits(c52); out[row, col + 24] = _bf16_bits(c53)
        out[row, col + 32] = _bf16_bits(c54); out[row, col + 40] = _bf16_bits(c55)
        out[row, col + 48] = _bf16_bits(c56); out[row, col + 56] = _bf16_bits(c57)
    row = start + row_base + 24
    if row < end:
        out[row, col + 0] = _bf16_bits(c60); out[row, col + 8] = _bf16_bits(c61)
        out[row, col + 16] = _bf16_bits(c62); out[row, col + 24] = _bf16_bits(c63)
        out[row, col + 32] = _bf16_bits(c64); out[row, col + 40] = _bf16_bits(c65)
        out[row, col + 48] = _bf16_bits(c66); out[row, col + 56] = _bf16_bits(c67)
    row = start + row_base + 28
    if row < end:
        out[row, col + 0] = _bf16_bits(c70); out[row, col + 8] = _bf16_bits(c71)
        out[row, col + 16] = _bf16_bits(c72); out[row, col + 24] = _bf16_bits(c73)
        out[row, col + 32] = _bf16_bits(c74); out[row, col + 40] = _bf16_bits(c75)
        out[row, col + 48] = _bf16_bits(c76); out[row, col + 56] = _bf16_bits(c77)


def solve(activations, w2, expert_offsets):
    activations, w2, offsets = activations.contiguous(), w2.contiguous(), expert_offsets.contiguous()
    rows, inner = activations.shape
    experts, hidden, _ = w2.shape
    assert experts == NUM_EXPERTS and hidden % TILE == 0 and inner % (4 * K_QUADS) == 0
    assert offsets.dtype == torch.int32
    out = torch.empty(rows, hidden, device=activations.device, dtype=activations.dtype)
    row_tiles = (rows + TILE - 1) // TILE + experts  # enough for every expert's partial last tile
    _grouped_gemm[(hidden // TILE, row_tiles), THREADS](activations.view(torch.int64), w2.view(torch.int64), offsets,
                                                        out.view(torch.int16))
    return out
