"""numba-cuda solution for 09_mla_absorbed_decode: split-sequence flash decoding with the bf16 cache read in the
kernel.

One block of 128 threads per (128-row slice of the cache, sequence) runs all 16 heads over its slice, so each
576-wide cache row comes from memory once for all heads (an earlier solution widened the whole 151 MB cache to
float32 with torch every call, then one block per (sequence, head) read every row again for each head, one row per
thread). The cache and the queries are read as 32-bit words holding two bf16 values (a bf16 is the top half of a
float32). Scores: the slice is staged 32 dims at a time in shared memory as float32 [dim][row] (16 threads read one
row's 64 bytes; the next piece is loaded into registers while the current one is used), the queries stay packed in
shared memory and each step widens its 32 dims of them, and each thread keeps a 4 heads x 4 rows register tile. A
warp owns 4 heads and all 128 rows, so the slice's softmax (max, exp, sum) is done with warp shuffles. The weights
then reuse the staging buffer, and each thread sums 4 latent dims (two words of every row, coalesced) for 8 heads at
a time, in two passes. The slice's unnormalised output, max and sum go to float32 buffers, and a second kernel
merges the slices of each (sequence, head). float32 on the CUDA cores; torch casts the [32, 16, 512] result to bf16.
A block needs 37 KB of shared memory and at most 80 registers a thread, so 6 blocks share an SM and a draw's ~656
busy slices run in one wave.
"""

import math

import torch
from numba import cuda, float32, int32
from numba.cuda import libdevice

HEADS = 16
HALF_HEADS = 8  # heads per pass of the weighted sum
KEY_WORDS = 288  # a 576-wide bf16 row as 32-bit words, two bf16 each
LATENT_WORDS = 256  # its first 512 dims
Q_WORDS = 4608  # HEADS * KEY_WORDS: one sequence's packed query rows
Q_STRIDE = 289  # KEY_WORDS + 1: query rows in shared memory, padded so a chunk's words of 16 heads spread over banks
Q_SMEM = 4624  # HEADS * Q_STRIDE
Q_CHUNK = 512  # CHUNK * HEADS floats: one chunk of the queries, widened
Q_LOADS = 36  # Q_WORDS // THREADS
TILE = 128  # cache rows per block
TILE_PADDED = 129  # TILE + 1, written out: shared array shapes must be module constants in numba-cuda
STAGE_FLOATS = 4128  # CHUNK * TILE_PADDED (more than the HEADS * TILE weights that reuse it)
THREADS = 128
CHUNK = 32  # dims staged in shared memory per step
CHUNK_WORDS = 16
CHUNKS = 18  # KEY_WORDS // CHUNK_WORDS
STAGE_LOADS = 16  # TILE * CHUNK_WORDS // THREADS words each thread stages per step
ROW_STEP = 8  # THREADS // CHUNK_WORDS: rows between one thread's staged words
GROUP = 8  # cache rows whose value words are loaded together in the weighted sum
GROUP_WORDS = 16  # 2 * GROUP, written out: a local array's shape must be a module constant
MERGE_THREADS = 128
MAX_SPLITS = 64  # at most MERGE_THREADS
SOFTMAX_SCALE = (128 + 64) ** -0.5  # qk_nope_head_dim + qk_rope_head_dim, as in the problem
FULL_MASK = 0xFFFFFFFF
INDEX_MASK = 0x7FFFFFFF  # word indices fit in 31 bits (solve checks): masking a sum with it proves it non-negative


@cuda.jit(device=True)
def _low(word):
    return libdevice.int_as_float(int32(word << 16))


@cuda.jit(device=True)
def _high(word):
    return libdevice.int_as_float(int32(word & -65536))


@cuda.jit(device=True)
def _warp_max(value):
    value = max(value, cuda.shfl_xor_sync(FULL_MASK, value, 16))
    value = max(value, cuda.shfl_xor_sync(FULL_MASK, value, 8))
    value = max(value, cuda.shfl_xor_sync(FULL_MASK, value, 4))
    value = max(value, cuda.shfl_xor_sync(FULL_MASK, value, 2))
    value = max(value, cuda.shfl_xor_sync(FULL_MASK, value, 1))
    return value


@cuda.jit(device=True)
def _warp_sum(value):
    value += cuda.shfl_xor_sync(FULL_MASK, value, 16)
    value += cuda.shfl_xor_sync(FULL_MASK, value, 8)
    value += cuda.shfl_xor_sync(FULL_MASK, value, 4)
    value += cuda.shfl_xor_sync(FULL_MASK, value, 2)
    value += cuda.shfl_xor_sync(FULL_MASK, value, 1)
    return value


@cuda.jit(device=True)
def _score_word(acc, qlo, qhi, klo, khi, q_f, k_s, h0, dim, lane):
    """Two dims of the scores: acc[i, j] += q[head h0 + i] . row[lane + 32 j] over dims dim and dim + 1 of the
    chunk (q_f is [dim][head], k_s [dim][row], both flat)."""
    for i in range(4):
        qlo[i] = q_f[dim * HEADS + h0 + i]
        qhi[i] = q_f[(dim + 1) * HEADS + h0 + i]
    for j in range(4):
        klo[j] = k_s[dim * TILE_PADDED + lane + 32 * j]
        khi[j] = k_s[(dim + 1) * TILE_PADDED + lane + 32 * j]
    for i in range(4):
        for j in range(4):
            acc[i, j] += qlo[i] * klo[j]
            acc[i, j] += qhi[i] * khi[j]


@cuda.jit(max_registers=80)  # 6 blocks an SM (CUDA 11.8's ptxas gives it 72 for sm_90, no spills)
def _slices(q_words, kv_words, seq_lens, context, part_o, part_m, part_l):
    """Block (split, b): rows [split * TILE, +TILE) of sequence b. part_o[b, h, split] = sum_rows p * row[:512],
    part_m = the slice's max score, part_l = sum_rows p, with p = exp(score - part_m). q_words and kv_words are
    flat word arrays ([B * 16 * 288] and [B * context * 288]). Index arithmetic is masked where that proves it
    non-negative, which spares numba's negative-index fix-up (a compare and a select per access) and lets every
    load of a row group address off one base."""
    q_s = cuda.shared.array(Q_SMEM, int32)  # packed bf16 queries, [head][word], rows Q_STRIDE words apart
    q_f = cuda.shared.array(Q_CHUNK, float32)  # the current chunk's queries as float32, [dim][head]
    # One float32 buffer: the staged rows [dim][row] (CHUNK x TILE_PADDED) while scoring, then the softmax weights
    # [head][row] (HEADS x TILE). Sharing it keeps a block at 37 KB, so 6 blocks fit an SM and a draw's ~656
    # busy slices (up to 792) all run at once.
    k_s = cuda.shared.array(STAGE_FLOATS, float32)
    tid = cuda.threadIdx.x
    lane = tid & 31
    warp = (tid >> 5) & 3
    split = cuda.blockIdx.x & (MAX_SPLITS - 1)
    b = cuda.blockIdx.y & 0xFFFF
    start = split * TILE
    end = min(seq_lens[b], context)
    if start >= end:  # the whole block leaves together, before any barrier
        return
    count = min(TILE, end - start)
    seq_base = b * (context & 0x7FFFFFFF)  # first cache row of sequence b (masked: known non-negative)

    column = tid & (THREADS - 1)
    q_base = (b * Q_WORDS + column) & INDEX_MASK
    qbuf = cuda.local.array(Q_LOADS, int32)
    for it in range(Q_LOADS):
        qbuf[it] = q_words[q_base + it * THREADS]
    for it in range(Q_LOADS):
        index = column + it * THREADS
        head = index // KEY_WORDS
        q_s[head * Q_STRIDE + index - head * KEY_WORDS] = qbuf[it]
    cuda.syncthreads()  # every chunk's widening reads words that other threads stored
    # Each thread widens two query words of every chunk: head f_head, words f_word and f_word + 8.
    f_head = tid & (HEADS - 1)
    f_word = (tid >> 4) & 7

    # Staging: thread tid moves word w_ld of rows r_ld + ROW_STEP * it (16 threads cover one row's 64 bytes). The
    # slice lies inside the cache (context % TILE == 0); rows past the sequence's end are staged and masked later.
    w_ld = tid & (CHUNK_WORDS - 1)
    r_ld = (tid >> 4) & (ROW_STEP - 1)
    stage_base = (seq_base + start + r_ld) * KEY_WORDS + w_ld
    kbuf = cuda.local.array(STAGE_LOADS, int32)
    at = stage_base & INDEX_MASK
    for it in range(STAGE_LOADS):
        kbuf[it] = kv_words[at + it * ROW_STEP * KEY_WORDS]

    # Scores: warp w owns heads h0 .. h0 + 3, lane owns rows lane + 32 j.
    h0 = warp * 4
    acc = cuda.local.array((4, 4), float32)
    qlo = cuda.local.array(4, float32)
    qhi = cuda.local.array(4, float32)
    klo = cuda.local.array(4, float32)
    khi = cuda.local.array(4, float32)
    for i in range(4):
        for j in range(4):
            acc[i, j] = float32(0.0)
    for c in range(CHUNKS):
        c0 = (c & 31) * CHUNK_WORDS
        for it in range(STAGE_LOADS):
            word = kbuf[it]
            k_s[2 * w_ld * TILE_PADDED + r_ld + ROW_STEP * it] = _low(word)
            k_s[(2 * w_ld + 1) * TILE_PADDED + r_ld + ROW_STEP * it] = _high(word)
        for t in range(2):
            word = q_s[f_head * Q_STRIDE + c0 + f_word + 8 * t]
            q_f[2 * (f_word + 8 * t) * HEADS + f_head] = _low(word)
            q_f[(2 * (f_word + 8 * t) + 1) * HEADS + f_head] = _high(word)
        cuda.syncthreads()
        following = min(c0 + CHUNK_WORDS, KEY_WORDS - CHUNK_WORDS)  # the last step reloads its own words
        at = (stage_base + following) & INDEX_MASK
        for it in range(STAGE_LOADS):
            kbuf[it] = kv_words[at + it * ROW_STEP * KEY_WORDS]
        # the chunk's 32 dims, unrolled by hand (numba has no unroll pragma); the offsets are constants
        _score_word(acc, qlo, qhi, klo, khi, q_f, k_s, h0, 0, lane)
        _score_word(acc, qlo, qhi, klo, khi, q_f, k_s, h0, 2, lane)
        _score_word(acc, qlo, qhi, klo, khi, q_f, k_s, h0, 4, lane)
        _score_word(acc, qlo, qhi, klo, khi, q_f, k_s, h0, 6, lane)
        _score_word(acc, qlo, qhi, klo, khi, q_f, k_s, h0, 8, lane)
        _score_word(acc, qlo, qhi, klo, khi, q_f, k_s, h0, 10, lane)
        _score_word(acc, qlo, qhi, klo, khi, q_f, k_s, h0, 12, lane)
        _score_word(acc, qlo, qhi, klo, khi, q_f, k_s, h0, 14, lane)
        _score_word(acc, qlo, qhi, klo, khi, q_f, k_s, h0, 16, lane)
        _score_word(acc, qlo, qhi, klo, khi, q_f, k_s, h0, 18, lane)
        _score_word(acc, qlo, qhi, klo, khi, q_f, k_s, h0, 20, lane)
        _score_word(acc, qlo, qhi, klo, khi, q_f, k_s, h0, 22, lane)
        _score_word(acc, qlo, qhi, klo, khi, q_f, k_s, h0, 24, lane)
        _score_word(acc, qlo, qhi, klo, khi, q_f, k_s, h0, 26, lane)
        _score_word(acc, qlo, qhi, klo, khi, q_f, k_s, h0, 28, lane)
        _score_word(acc, qlo, qhi, klo, khi, q_f, k_s, h0, 30, lane)
        cuda.syncthreads()  # the last one also ends every read of the staged rows: k_s becomes the weights

    # Softmax over the slice, per head, within the warp that owns it.
    scale = float32(SOFTMAX_SCALE)
    for j in range(4):
        valid = lane + 32 * j < count
        for i in range(4):
            acc[i, j] = acc[i, j] * scale if valid else float32(-math.inf)
    for i in range(4):
        top = _warp_max(max(max(acc[i, 0], acc[i, 1]), max(acc[i, 2], acc[i, 3])))  # row 0 is valid: finite
        total = float32(0.0)
        for j in range(4):
            p = math.exp(acc[i, j] - top)
            k_s[(h0 + i) * TILE + lane + 32 * j] = p
            total += p
        total = _warp_sum(total)
        if lane == 0:
            part_m[b, h0 + i, split] = top
            part_l[b, h0 + i, split] = total
    cuda.syncthreads()

    # Weighted sum, in two passes of 8 heads (32 accumulators a thread rather than 64 keep it at 80 registers):
    # thread tid owns latent words tid and tid + THREADS, i.e. dims 2 tid, 2 tid + 1, 2 tid + 256 and 2 tid + 257.
    out = cuda.local.array((HALF_HEADS, 4), float32)
    vbuf = cuda.local.array(GROUP_WORDS, int32)
    for half in range(2):
        hb = (half & 1) * HALF_HEADS
        for h in range(HALF_HEADS):
            for c in range(4):
                out[h, c] = float32(0.0)
        for n in range(0, count, GROUP):
            n0 = n & (TILE - 1)
            at = ((seq_base + start + n0) * KEY_WORDS + column) & INDEX_MASK
            for u in range(GROUP):
                # rows past the sequence's end (still inside the cache) have weight 0, and stale words become 0
                live = n0 + u < count
                low_word = kv_words[at + u * KEY_WORDS]
                high_word = kv_words[at + u * KEY_WORDS + THREADS]
                vbuf[2 * u] = low_word if live else 0
                vbuf[2 * u + 1] = high_word if live else 0
            for u in range(GROUP):
                v0 = _low(vbuf[2 * u])
                v1 = _high(vbuf[2 * u])
                v2 = _low(vbuf[2 * u + 1])
                v3 = _high(vbuf[2 * u + 1])
                for h in range(HALF_HEADS):
                    p = k_s[(hb + h) * TILE + n0 + u]
                    out[h, 0] += p * v0
                    out[h, 1] += p * v1
                    out[h, 2] += p * v2
                    out[h, 3] += p * v3
        for h in range(HALF_HEADS):
            part_o[b, hb + h, split, 2 * column] = out[h, 0]
            part_o[b, hb + h, split, 2 * column + 1] = out[h, 1]
            part_o[b, hb + h, split, 2 * column + 2 * THREADS] = out[h, 2]
            part_o[b, hb + h, split, 2 * column + 2 * THREADS + 1] = out[h, 3]


@cuda.jit
def _merge(part_o, part_m, part_l, seq_lens, context, out):
    """Block per (sequence, head): out = sum_s e^(m_s - M) o_s / sum_s e^(m_s - M) l_s over the slices that ran."""
    weights = cuda.shared.array(MAX_SPLITS, float32)
    heads = out.shape[1]
    b = cuda.blockIdx.x // heads
    h = cuda.blockIdx.x % heads
    tid = cuda.threadIdx.x
    used = (min(seq_lens[b], context) + TILE - 1) // TILE
    top = float32(-math.inf)
    for s in range(used):
        top = max(top, part_m[b, h, s])
    if tid < used:
        weights[tid] = math.exp(part_m[b, h, tid] - top)
    cuda.syncthreads()
    total = float32(0.0)
    for s in range(used):
        total += weights[s] * part_l[b, h, s]
    inverse = float32(1.0) / total
    # thread tid owns dims tid + MERGE_THREADS * c: four independent loads per slice
    a0 = float32(0.0)
    a1 = float32(0.0)
    a2 = float32(0.0)
    a3 = float32(0.0)
    for s in range(used):
        w = weights[s]
        a0 += w * part_o[b, h, s, tid]
        a1 += w * part_o[b, h, s, tid + MERGE_THREADS]
        a2 += w * part_o[b, h, s, tid + 2 * MERGE_THREADS]
        a3 += w * part_o[b, h, s, tid + 3 * MERGE_THREADS]
    out[b, h, tid] = a0 * inverse
    out[b, h, tid + MERGE_THREADS] = a1 * inverse
    out[b, h, tid + 2 * MERGE_THREADS] = a2 * inverse
    out[b, h, tid + 3 * MERGE_THREADS] = a3 * inverse


def solve(q, kv_cache, seq_lens):
    batch, heads, width = q.shape
    context = kv_cache.shape[1]
    assert heads == HEADS and width == 2 * KEY_WORDS and kv_cache.shape[2] == width
    splits = (context + TILE - 1) // TILE
    assert splits <= MAX_SPLITS and 2 * LATENT_WORDS == 4 * MERGE_THREADS
    assert context % TILE == 0 and batch <= 0xFFFF and batch * context * KEY_WORDS <= INDEX_MASK
    q_words = q.contiguous().view(torch.int32).view(-1)  # the bf16 bits as flat words, no copy
    kv_words = kv_cache.contiguous().view(torch.int32).view(-1)
    lens = seq_lens.to(torch.int32).contiguous()
    part_o = torch.empty(batch, heads, splits, 2 * LATENT_WORDS, device=q.device, dtype=torch.float32)
    part_m = torch.empty(batch, heads, splits, device=q.device, dtype=torch.float32)
    part_l = torch.empty(batch, heads, splits, device=q.device, dtype=torch.float32)
    _slices[(splits, batch), THREADS](q_words, kv_words, lens, context, part_o, part_m, part_l)
    out = torch.empty(batch, heads, 2 * LATENT_WORDS, device=q.device, dtype=torch.float32)
    _merge[batch * heads, MERGE_THREADS](part_o, part_m, part_l, lens, context, out)
    return out.to(q.dtype)
