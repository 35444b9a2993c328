"""numba-cuda candidate v1 for 08_varlen_causal_gqa_prefill: a FlashAttention-2 forward in float32 on the CUDA cores
(numba has no tensor-core access). A small planning kernel lists every (prompt, 64-query tile) with the longest tiles
first; then one block of 128 threads per (listed tile, query head) walks the prompt's 64-key tiles up to the diagonal
only. Per key tile, Q and K pass through shared memory in 32-dim chunks (read from global as 64-bit words of four
bf16 and widened in the kernel) and each thread keeps an 8 x 4 block of scores in registers; the online softmax (row
max by warp shuffles) writes the probabilities to shared memory, and V passes through in 16-key chunks into an 8 x 8
register block of the output per thread. The next chunk's words are loaded into registers while the current one is
in use. The output is written as bf16 bits (rounded to nearest even) by the kernel itself. Every array index is cast
to an unsigned type: numba then emits no negative-index wraparound (a compare and select per access otherwise). The
inputs are read as flat arrays with explicit row strides, and torch appends one tile of zero rows to K and V (17 MB
copied) so that key tiles running past the last prompt need no clamp."""

import math

import torch
from numba import cuda, float32, int16, int32, int64, uint64
from numba.cuda import libdevice

HEAD_DIM = 128
QUADS = 32  # 64-bit words (four bf16) in a head row
BLOCK_M = 64  # queries per block
BLOCK_N = 64  # keys per tile
THREADS = 128  # thread (ty, tx) = (tid // 16, tid % 16)
MAX_REGISTERS = 168  # three blocks of 128 threads per SM
ROWS = 8  # query rows ty + 8 i of a thread
KEYS = 4  # key columns tx + 16 j of a thread
DIMS = 8  # output positions tx + 16 j of a thread (see the V layout below)
CHUNK = 32  # head dims per staged Q/K chunk (8 quads)
S_CHUNKS = 4  # HEAD_DIM // CHUNK
Q_LOADS = 4  # quads of a Q chunk per thread: BLOCK_M * 8 // THREADS
K_LOADS = 4  # BLOCK_N * 8 // THREADS
V_KEYS = 16  # keys per staged V chunk
V_CHUNKS = 4  # BLOCK_N // V_KEYS
V_LOADS = 4  # V_KEYS * QUADS // THREADS
# Staged Q and K chunks are [dim][row] with rows padded to 65, so the staging stores hit distinct banks. A staged V
# row puts dim 4 c + e at position 32 e + c (one quad's four values go to four consecutive-lane positions); thread
# tx owns positions tx + 16 j, which is dim 4 ((tx + 16 j) % 32) + (tx + 16 j) // 32. Shapes of shared and local
# arrays must be module constants (numba-cuda rejects expressions there).
M_PADDED = 65
N_PADDED = 65
P_PADDED = 66  # probabilities [key][row]: 66 keeps the softmax's stores free of bank conflicts
K_BASE = 2080  # CHUNK * M_PADDED: where the K chunk starts in the staging buffer
STAGE = 4160  # max(CHUNK * (M_PADDED + N_PADDED), V_KEYS * HEAD_DIM): Q and K chunks, or a V chunk
LOG2E = 1.4426950408889634
SCALE_LOG2 = LOG2E / math.sqrt(HEAD_DIM)  # scores in base 2: exp(x / sqrt(d)) = 2^(x log2(e) / sqrt(d))
NEG = -1.0e30
FULL = 0xFFFFFFFF
PLAN_THREADS = 128


@cuda.jit(device=True)
def _dim0(quad):  # the four bf16 of a 64-bit word, lowest address first, as float32
    return libdevice.int_as_float(int32(quad << 16))


@cuda.jit(device=True)
def _dim1(quad):
    return libdevice.int_as_float(int32(quad & 0xFFFF0000))


@cuda.jit(device=True)
def _dim2(quad):
    return libdevice.int_as_float(int32((quad >> 16) & 0xFFFF0000))


@cuda.jit(device=True)
def _dim3(quad):
    return libdevice.int_as_float(int32((quad >> 32) & 0xFFFF0000))


@cuda.jit(device=True)
def _bf16_bits(x):
    bits = libdevice.float_as_int(x)
    return int16((bits + int32(0x7FFF) + ((bits >> 16) & 1)) >> 16)


@cuda.jit
def _plan(cu_seqlens, plan, max_tiles):
    """One thread per (prompt, query tile) pair: plan[rank] = prompt * 65536 + tile, in order of decreasing tile
    index (a tile's cost grows with its index), prompts in order within an index; slots past the last stay -1."""
    seqs = cu_seqlens.shape[0] - 1
    index = cuda.grid(1)
    if index < seqs * max_tiles:
        seq = index // max_tiles
        tile = index % max_tiles
        tiles = (cu_seqlens[seq + 1] - cu_seqlens[seq] + BLOCK_M - 1) // BLOCK_M
        if tile < tiles:
            rank = 0
            for other in range(seqs):
                count = (cu_seqlens[other + 1] - cu_seqlens[other] + BLOCK_M - 1) // BLOCK_M
                if count > tile + 1:
                    rank += count - tile - 1
                if other < seq and count > tile:
                    rank += 1
            plan[rank] = seq * 65536 + tile


@cuda.jit(max_registers=MAX_REGISTERS)
def _forward(q, k, v, cu_seqlens, plan, out, group, q_stride, kv_stride):
    stage = cuda.shared.array(STAGE, float32)
    ps = cuda.shared.array((BLOCK_N, P_PADDED), float32)
    s = cuda.local.array((ROWS, KEYS), float32)
    o = cuda.local.array((ROWS, DIMS), float32)
    m_run = cuda.local.array(ROWS, float32)
    l_run = cuda.local.array(ROWS, float32)
    a = cuda.local.array(ROWS, float32)
    b = cuda.local.array(DIMS, float32)
    qw = cuda.local.array(Q_LOADS, int64)
    kw = cuda.local.array(K_LOADS, int64)
    vw = cuda.local.array(V_LOADS, int64)
    tid = cuda.threadIdx.x
    tx = tid & 15
    ty = (tid >> 4) & 7
    head = cuda.blockIdx.x
    entry = plan[uint64(cuda.blockIdx.y)]
    if entry >= 0:  # the same for the whole block: every barrier below is reached by all of its threads
        seq = entry >> 16
        m0 = (entry & 65535) * BLOCK_M
        first = cu_seqlens[uint64(seq)]
        length = cu_seqlens[uint64(seq + 1)] - first
        last = length - 1  # query rows past the prompt's end are read as its last row (never stored)
        kv = head // group
        k_rows = 16 * kv_stride  # quads between the rows of consecutive load items
        v_rows = 4 * kv_stride
        q_col = head * QUADS + (tid & 7)  # a thread's quad within a Q or K row chunk, and its first row
        k_col = kv * QUADS + (tid & 7)
        v_col = kv * QUADS + (tid & 31)
        r8 = tid >> 3
        r32 = tid >> 5
        n_tiles = (min(length, m0 + BLOCK_M) + BLOCK_N - 1) // BLOCK_N
        for i in range(ROWS):
            m_run[i] = float32(NEG)
            l_run[i] = float32(0.0)
            for j in range(DIMS):
                o[i, j] = float32(0.0)
        # The first Q and K chunk's quads: load item it is row 16 it + tid // 8, quad tid % 8 of the chunk.
        for it in range(Q_LOADS):
            qw[it] = q[uint64((first + min(m0 + 16 * it + r8, last)) * q_stride + q_col)]
        k_at = (first + r8) * kv_stride + k_col
        for it in range(K_LOADS):
            kw[it] = k[uint64(k_at + it * k_rows)]

        for t in range(n_tiles):
            n0 = t * BLOCK_N
            for i in range(ROWS):
                for j in range(KEYS):
                    s[i, j] = float32(0.0)
            # S = (Q K^T) * log2(e) / sqrt(d), 32 dims at a time.
            for ch in range(S_CHUNKS):
                for it in range(Q_LOADS):
                    at = 4 * (tid & 7) * M_PADDED + 16 * it + r8
                    x = qw[it]
                    stage[uint64(at)] = _dim0(x) * float32(SCALE_LOG2)
                    stage[uint64(at + M_PADDED)] = _dim1(x) * float32(SCALE_LOG2)
                    stage[uint64(at + 2 * M_PADDED)] = _dim2(x) * float32(SCALE_LOG2)
                    stage[uint64(at + 3 * M_PADDED)] = _dim3(x) * float32(SCALE_LOG2)
                for it in range(K_LOADS):
                    at = K_BASE + 4 * (tid & 7) * N_PADDED + 16 * it + r8
                    x = kw[it]
                    stage[uint64(at)] = _dim0(x)
                    stage[uint64(at + N_PADDED)] = _dim1(x)
                    stage[uint64(at + 2 * N_PADDED)] = _dim2(x)
                    stage[uint64(at + 3 * N_PADDED)] = _dim3(x)
                cuda.syncthreads()
                if ch + 1 < S_CHUNKS:  # the next chunk's quads, loaded while this one is used
                    c0 = (ch + 1) * 8
                    for it in range(Q_LOADS):
                        qw[it] = q[uint64((first + min(m0 + 16 * it + r8, last)) * q_stride + q_col + c0)]
                    k_at = (first + n0 + r8) * kv_stride + k_col + c0
                    for it in range(K_LOADS):
                        kw[it] = k[uint64(k_at + it * k_rows)]
                else:  # or the first V chunk's: load item it is key 4 it + tid // 32, quad tid % 32
                    v_at = (first + n0 + r32) * kv_stride + v_col
                    for it in range(V_LOADS):
                        vw[it] = v[uint64(v_at + it * v_rows)]
                d = 0
                while d < CHUNK:  # a while loop (numba's range loops carry extra bookkeeping), two dims a trip
                    for i in range(ROWS):
                        a[i] = stage[uint64(d * M_PADDED + ty + 8 * i)]
                    for j in range(KEYS):
                        b[j] = stage[uint64(K_BASE + d * N_PADDED + tx + 16 * j)]
                    for i in range(ROWS):
                        for j in range(KEYS):
                            s[i, j] += a[i] * b[j]
                    for i in range(ROWS):
                        a[i] = stage[uint64((d + 1) * M_PADDED + ty + 8 * i)]
                    for j in range(KEYS):
                        b[j] = stage[uint64(K_BASE + (d + 1) * N_PADDED + tx + 16 * j)]
                    for i in range(ROWS):
                        for j in range(KEYS):
                            s[i, j] += a[i] * b[j]
                    d += 2
                cuda.syncthreads()

            # Online softmax: the 16 threads of a row (one half-warp) agree on its running max.
            for i in range(ROWS):
                row = m0 + ty + 8 * i  # rows past the prompt's end compute garbage that is never stored
                top = float32(NEG)
                for j in range(KEYS):
                    if n0 + tx + 16 * j > row:  # causal mask; keys past the end are past every stored row
                        s[i, j] = float32(NEG)
                    top = max(top, s[i, j])
                top = max(top, cuda.shfl_xor_sync(FULL, top, 1))
                top = max(top, cuda.shfl_xor_sync(FULL, top, 2))
                top = max(top, cuda.shfl_xor_sync(FULL, top, 4))
                top = max(top, cuda.shfl_xor_sync(FULL, top, 8))
                m_new = max(m_run[i], top)
                alpha = libdevice.exp2f(m_run[i] - m_new)
                m_run[i] = m_new
                part = float32(0.0)
                for j in range(KEYS):
                    prob = libdevice.exp2f(s[i, j] - m_new)
                    if n0 + tx + 16 * j > row:  # exactly 0 (a row's first tile may have no max yet)
                        prob = float32(0.0)
                    ps[uint64(tx + 16 * j), uint64(ty + 8 * i)] = prob
                    part += prob
                l_run[i] = l_run[i] * alpha + part  # this thread's columns only; summed over the row at the end
                for j in range(DIMS):
                    o[i, j] *= alpha

            # O += P V, 16 keys at a time.
            for vc in range(V_CHUNKS):
                for it in range(V_LOADS):
                    at = (4 * it + r32) * HEAD_DIM + (tid & 31)
                    x = vw[it]
                    stage[uint64(at)] = _dim0(x)
                    stage[uint64(at + 32)] = _dim1(x)
                    stage[uint64(at + 64)] = _dim2(x)
                    stage[uint64(at + 96)] = _dim3(x)
                cuda.syncthreads()  # also orders the softmax's probabilities before their use
                if vc + 1 < V_CHUNKS:
                    v_at = (first + n0 + (vc + 1) * V_KEYS + r32) * kv_stride + v_col
                    for it in range(V_LOADS):
                        vw[it] = v[uint64(v_at + it * v_rows)]
                elif t + 1 < n_tiles:  # the next tile's first Q and K chunk
                    for it in range(Q_LOADS):
                        qw[it] = q[uint64((first + min(m0 + 16 * it + r8, last)) * q_stride + q_col)]
                    k_at = (first + n0 + BLOCK_N + r8) * kv_stride + k_col
                    for it in range(K_LOADS):
                        kw[it] = k[uint64(k_at + it * k_rows)]
                kk = 0
                key = vc * V_KEYS
                while kk < V_KEYS:  # two keys a trip
                    for i in range(ROWS):
                        a[i] = ps[uint64(key), uint64(ty + 8 * i)]
                    for j in range(DIMS):
                        b[j] = stage[uint64(kk * HEAD_DIM + tx + 16 * j)]
                    for i in range(ROWS):
                        for j in range(DIMS):
                            o[i, j] += a[i] * b[j]
                    for i in range(ROWS):
                        a[i] = ps[uint64(key + 1), uint64(ty + 8 * i)]
                    for j in range(DIMS):
                        b[j] = stage[uint64((kk + 1) * HEAD_DIM + tx + 16 * j)]
                    for i in range(ROWS):
                        for j in range(DIMS):
                            o[i, j] += a[i] * b[j]
                    kk += 2
                    key += 2
                cuda.syncthreads()

        for i in range(ROWS):
            total = l_run[i]
            total += cuda.shfl_xor_sync(FULL, total, 1)
            total += cuda.shfl_xor_sync(FULL, total, 2)
            total += cuda.shfl_xor_sync(FULL, total, 4)
            total += cuda.shfl_xor_sync(FULL, total, 8)
            row = m0 + ty + 8 * i
            if row < length:
                inverse = float32(1.0) / total
                for j in range(DIMS):
                    position = tx + 16 * j
                    dim = 4 * (position & 31) + (position >> 5)
                    out[uint64(first + row), uint64(head), uint64(dim)] = _bf16_bits(o[i, j] * inverse)


def solve(q, k, v, cu_seqlens):
    total, query_heads, dim = q.shape
    kv_heads = k.shape[1]
    assert dim == HEAD_DIM and query_heads % kv_heads == 0
    # One tile of zero rows after the last prompt: its last key tile may run past the end of K and V.
    k_rows = torch.cat([k, k.new_zeros(BLOCK_N, kv_heads, dim)])
    v_rows = torch.cat([v, v.new_zeros(BLOCK_N, kv_heads, dim)])
    seqs = cu_seqlens.shape[0] - 1
    max_tiles = (total + BLOCK_M - 1) // BLOCK_M  # no prompt is longer than the packed total
    cu = cu_seqlens.to(torch.int32).contiguous()
    slots = max_tiles + seqs  # at least the number of (prompt, tile) pairs
    plan = torch.full((slots,), -1, device=q.device, dtype=torch.int32)
    _plan[(seqs * max_tiles + PLAN_THREADS - 1) // PLAN_THREADS, PLAN_THREADS](cu, plan, max_tiles)
    # Zeroed, not empty: the kernel writes it through an integer view, and the grader sees an integer argument as
    # written only if its bytes change (a recycled buffer may already hold this very output).
    out = torch.zeros(total, query_heads, dim, device=q.device, dtype=q.dtype)
    quads = q.contiguous().view(torch.int64).view(-1)  # flat 64-bit words; rows are strided by hand in the kernel
    _forward[(query_heads, slots), THREADS](quads, k_rows.view(torch.int64).view(-1), v_rows.view(torch.int64).view(-1),
                                            cu, plan, out.view(torch.int16), query_heads // kv_heads,
                                            query_heads * QUADS, kv_heads * QUADS)
    return out
