"""numba-cuda solution for 41_qwen3_paged_decode_large_batch: split-sequence flash decoding over the paged cache in one
kernel launch, the bf16 pages read as 64-bit words and widened in the kernel; v1 with a cheaper score step.

As v1 (attention/07's shipped kernel with 256-row slices, unsigned hot indices, the KV head count a constant): one
block of 128 threads per (256-row slice = 16 pages, sequence and KV head) runs the KV head's 8 query heads over its
slice, so each cached row comes from memory once; each warp owns 4 pages, looks their ids up first, and loads 16
words a lane before using any; the slice's softmax is one warp per 2 heads; the weighted sum has a lane own 4 dims
of the 8 heads (one 256-byte row per warp load); the slice results go to a float32 workspace and the last block of a
(sequence, KV head) merges them (threadfence and an atomic counter); torch casts the float32 result to bf16.

What differs is the score step. v1 spreads a row over the 32 lanes (4 dims a lane), so every row's 8 scores need a
32-lane reduce-scatter: 9 shuffles and ~25 selects and adds a row beside its 32 multiply-adds. Here a half-warp
holds one row (lane l reads words l % 16 and l % 16 + 16 of row l / 16 of a pair: dims 4 j .. 4 j + 3 and 64 + 4 j
.. 64 + 4 j + 3, two coalesced 128-byte halves per load), so a warp load brings two rows and each lane dots 8 dims
with the 8 queries (64 floats in registers): the same 32 multiply-adds a row, but the 16-lane reduce-scatter (4 + 2
+ 1 exchanges, then one sum) is 8 shuffles for two rows. Lane l ends with head (l >> 1) & 7 of row l >> 4; the even
lanes store it. ptxas (sm_90) counts per 16-row page of scores: 972 instructions (v1: 1240; 64 SHFL against 144, 120
FSEL against 240), 128 registers without a cap.
"""

import math

import torch
from numba import cuda, float32, int32, int64, uint64
from numba.cuda import libdevice

GROUP = 8  # query heads per KV head
KV_HEADS = 8  # a compile-time constant, so a page's row loads are one address plus immediate offsets
HEAD_DIM = 128
WORDS = 32  # 64-bit words per cached row: four bf16 each, one per lane
PAGE = 16  # rows per page
ROW_STRIDE = 256  # KV_HEADS * WORDS: words from one cached row of a KV head to the next
TILE = 256  # cache rows per block: 16 pages
THREADS = 128
WARP_PAGES = 4  # pages per warp
WARP_ROWS = 64  # TILE // 4 warps
SCORES = 2048  # GROUP * TILE: scores, then softmax weights, [head][row]
PARTIAL = 4096  # 4 warps * GROUP * HEAD_DIM: the warps' weighted sums before they are added
MAX_SPLITS = 32  # slices per sequence: one per lane in the merge
FULL_MASK = 0xFFFFFFFF
INDEX_MASK = 0x7FFFFFFF  # indices fit in 31 bits (solve checks): masking proves them non-negative to the compiler
# Hot indices are cast to uint64: numba adds the array's length to a negative signed index (Python's wraparound),
# ~5 integer instructions a load; an unsigned index has no such code and keeps constant offsets as immediates.


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
def _dot8(qf, h, k0, k1, k2, k3, k4, k5, k6, k7):
    """Head h's query (this lane's 8 dims) dotted with the row's 8 dims."""
    return (qf[8 * h] * k0 + qf[8 * h + 1] * k1 + qf[8 * h + 2] * k2 + qf[8 * h + 3] * k3 + qf[8 * h + 4] * k4
            + qf[8 * h + 5] * k5 + qf[8 * h + 6] * k6 + qf[8 * h + 7] * k7)  # one chain: a multiply and 7 FMAs


@cuda.jit(device=True)
def _score2(word0, word1, qf, part, up8, up4, up2):
    """The 8 heads' dot products of the half-warp's row (words j and j + 16 of it in this lane, j = lane % 16),
    reduced over the 16 lanes: every lane returns the score of head (lane >> 1) & 7 (a reduce-scatter: halves of
    the heads are exchanged at xor 8, 4 and 2, then the pair summed). part is 4 floats of scratch."""
    lo = int32(word0)
    hi = int32(word0 >> 32)
    k0 = libdevice.int_as_float(int32(lo << 16))
    k1 = libdevice.int_as_float(int32(lo & -65536))
    k2 = libdevice.int_as_float(int32(hi << 16))
    k3 = libdevice.int_as_float(int32(hi & -65536))
    lo = int32(word1)
    hi = int32(word1 >> 32)
    k4 = libdevice.int_as_float(int32(lo << 16))
    k5 = libdevice.int_as_float(int32(lo & -65536))
    k6 = libdevice.int_as_float(int32(hi << 16))
    k7 = libdevice.int_as_float(int32(hi & -65536))
    # lanes with bit 3 clear keep heads 0-3, the others heads 4-7
    for j in range(4):
        low = _dot8(qf, j, k0, k1, k2, k3, k4, k5, k6, k7)
        high = _dot8(qf, j + 4, k0, k1, k2, k3, k4, k5, k6, k7)
        part[j] = (high if up8 else low) + cuda.shfl_xor_sync(FULL_MASK, low if up8 else high, 8)
    # then bit 2 picks 2 of those 4, bit 1 one of the 2
    x0 = part[0]
    x1 = part[1]
    x2 = part[2]
    x3 = part[3]
    c0 = (x2 if up4 else x0) + cuda.shfl_xor_sync(FULL_MASK, x0 if up4 else x2, 4)
    c1 = (x3 if up4 else x1) + cuda.shfl_xor_sync(FULL_MASK, x1 if up4 else x3, 4)
    d = (c1 if up2 else c0) + cuda.shfl_xor_sync(FULL_MASK, c0 if up2 else c1, 2)
    d += cuda.shfl_xor_sync(FULL_MASK, d, 1)
    return d


@cuda.jit(device=True)
def _accumulate(word, acc, weights, row):
    """acc[4 h + c] += weight[h, row] * value[row, 4 lane + c]."""
    lo = int32(word)
    hi = int32(word >> 32)
    v0 = libdevice.int_as_float(int32(lo << 16))
    v1 = libdevice.int_as_float(int32(lo & -65536))
    v2 = libdevice.int_as_float(int32(hi << 16))
    v3 = libdevice.int_as_float(int32(hi & -65536))
    for h in range(GROUP):
        p = weights[uint64(h * TILE + row)]
        acc[4 * h] += p * v0
        acc[4 * h + 1] += p * v1
        acc[4 * h + 2] += p * v2
        acc[4 * h + 3] += p * v3


@cuda.jit(max_registers=128)  # 4 blocks an SM
def _decode(q_words, k_words, v_words, block_table, seq_lens, ws):
    """Block (split, g) with g = b * KV_HEADS + kv: cache rows [split * TILE, +TILE) of sequence b, KV head kv.
    q_words, k_words, v_words: the bf16 tensors as flat 64-bit words; block_table: flat int32 [batch * pages];
    ws: float32, its first [groups] counters zeroed: the counters, the float32 result [groups, GROUP, HEAD_DIM], then
    the slices' max [g, split, h], sum [g, split, h] and unnormalised output [g, split, h, dim] (dim stored as
    c * 32 + lane for dim 4 lane + c)."""
    scores = cuda.shared.array(SCORES, float32)
    partial = cuda.shared.array(PARTIAL, float32)
    last = cuda.shared.array(1, int32)
    tid = cuda.threadIdx.x
    lane = tid & 31
    warp = (tid >> 5) & 3
    split = cuda.blockIdx.x
    g = cuda.blockIdx.y
    splits = cuda.gridDim.x
    groups = cuda.gridDim.y
    batch = seq_lens.shape[0]
    pages = block_table.shape[0] // batch  # pages per sequence
    b = g // KV_HEADS
    kv = g - b * KV_HEADS
    start = split * TILE
    end = min(seq_lens[b], pages * PAGE)
    if start >= end:  # the whole block leaves together, before any barrier
        return
    live = (end + TILE - 1) // TILE  # slices of this sequence that run

    # The warp's 4 pages (rows first .. first + 63 of the slice); pages past the end are not looked up.
    first = warp * WARP_ROWS
    page_at = (b * pages + ((start + first) >> 4)) & INDEX_MASK
    half = lane >> 4  # the row of a pair this lane reads for the scores
    j16 = lane & 15
    at = cuda.local.array(WARP_PAGES, int64)  # this lane's word of each page's row 0 (value rows)
    for p in range(WARP_PAGES):
        page = block_table[page_at + p] if start + first + p * PAGE < end else 0
        at[p] = ((page * PAGE * KV_HEADS + kv) * WORDS + lane) & INDEX_MASK
    k_shift = half * ROW_STRIDE + j16 - lane  # from at[p] to this lane's first key word of row `half` of the page

    # the 8 queries' dims 4 j16 + c and 64 + 4 j16 + c (c < 4) of this lane, times the softmax scale
    qf = cuda.local.array(64, float32)
    scale = float32(1.0 / math.sqrt(HEAD_DIM))
    for h in range(GROUP):
        for w in range(2):
            word = q_words[((g * GROUP + h) * WORDS + j16 + 16 * w) & INDEX_MASK]
            lo = int32(word)
            hi = int32(word >> 32)
            qf[8 * h + 4 * w] = libdevice.int_as_float(int32(lo << 16)) * scale
            qf[8 * h + 4 * w + 1] = libdevice.int_as_float(int32(lo & -65536)) * scale
            qf[8 * h + 4 * w + 2] = libdevice.int_as_float(int32(hi << 16)) * scale
            qf[8 * h + 4 * w + 3] = libdevice.int_as_float(int32(hi & -65536)) * scale

    up8 = (lane & 8) != 0
    up4 = (lane & 4) != 0
    up2 = (lane & 2) != 0
    writer = (lane & 1) == 0
    my_head_row = ((lane >> 1) & 7) * TILE + half  # this lane's head's row of scores, and its row of a pair
    buf = cuda.local.array(PAGE, int64)
    part = cuda.local.array(4, float32)

    # Scores of the warp's 64 rows, a page (8 row pairs, 16 loads) at a time; a page past the end is only marked
    # -inf. Pair i is rows 2 i (lanes 0-15) and 2 i + 1 (lanes 16-31) of the page.
    for p in range(WARP_PAGES):
        r0 = first + p * PAGE
        rows = int32(min(end - start - r0, PAGE)) - half  # valid rows of the page, less this lane's row of a pair
        my_row = my_head_row + r0
        if rows + half > 0:
            base = at[p] + k_shift
            for i in range(PAGE // 2):
                buf[2 * i] = k_words[uint64(base + 2 * i * ROW_STRIDE)] if 2 * i < rows else int64(0)
                buf[2 * i + 1] = k_words[uint64(base + 2 * i * ROW_STRIDE + 16)] if 2 * i < rows else int64(0)
            for i in range(PAGE // 2):
                s = _score2(buf[2 * i], buf[2 * i + 1], qf, part, up8, up4, up2)
                if writer:
                    scores[uint64(my_row + 2 * i)] = s if 2 * i < rows else float32(-math.inf)
        elif writer:
            for i in range(PAGE // 2):
                scores[uint64(my_row + 2 * i)] = float32(-math.inf)

    # The first page of value words is loaded before the softmax, so it is in flight across it (the warp's first
    # page may be past the end: then nothing is loaded).
    rows = int32(min(end - start - first, PAGE))
    base = at[0]
    for i in range(PAGE):
        buf[i] = v_words[uint64(base + i * ROW_STRIDE)] if i < rows else int64(0)
    cuda.syncthreads()

    # Softmax over the slice: warp w owns heads w and w + 4 (row 0 of a running slice is valid: the max is finite).
    for t in range(2):
        h = warp + 4 * t
        row = h * TILE + lane
        top = float32(-math.inf)
        for c in range(TILE // 32):
            top = max(top, scores[uint64(row + 32 * c)])
        top = _warp_max(top)
        total = float32(0.0)
        for c in range(TILE // 32):
            e = math.exp(scores[uint64(row + 32 * c)] - top)
            scores[uint64(row + 32 * c)] = e
            total += e
        total = _warp_sum(total)
        stat = groups * (1 + GROUP * HEAD_DIM) + (g * splits + split) * GROUP + h
        if lane == 0:
            ws[stat] = top
            ws[stat + groups * splits * GROUP] = total
    cuda.syncthreads()

    # Weighted sum of the warp's 64 value rows: lane owns dims 4 lane .. 4 lane + 3 of the 8 heads.
    acc = cuda.local.array(32, float32)
    for j in range(32):
        acc[j] = float32(0.0)
    for p in range(WARP_PAGES):
        r0 = first + p * PAGE
        rows = int32(min(end - start - r0, PAGE))
        if rows > 0:
            if p > 0:
                base = at[p]
                for i in range(PAGE):
                    buf[i] = v_words[uint64(base + i * ROW_STRIDE)] if i < rows else int64(0)
            for i in range(PAGE):
                _accumulate(buf[i], acc, scores, r0 + i)
    mine = warp * 1024 + lane
    for j in range(GROUP):
        for c in range(4):
            partial[uint64(mine + j * HEAD_DIM + c * 32)] = acc[4 * j + c]
    cuda.syncthreads()

    # Thread (warp w, lane) adds the 4 warps' sums of heads w and w + 4, dims 4 lane + c, and stores them.
    o_base = groups * (1 + GROUP * HEAD_DIM + 2 * splits * GROUP) + HEAD_DIM * GROUP * g * splits  # slice 0 of g
    for t in range(2):
        h = warp + 4 * t
        mine = (o_base + (split * GROUP + h) * HEAD_DIM + lane) & INDEX_MASK
        for c in range(4):
            k = h * HEAD_DIM + c * 32 + lane  # (a uint64 is only ever an index: uint64 + int64 is a float in numba)
            ws[mine + c * 32] = ((partial[uint64(k)] + partial[uint64(k + 1024)])
                                 + (partial[uint64(k + 2048)] + partial[uint64(k + 3072)]))
    cuda.threadfence()  # this block's partial results are visible device-wide before it is counted
    cuda.syncthreads()
    if tid == 0:
        done = cuda.atomic.add(ws, g, float32(1.0))
        last[0] = 1 if done == float32(live - 1) else 0
    cuda.syncthreads()
    if last[0] == 0:
        return
    cuda.threadfence()

    # The last block of group g merges its live slices: lane s holds slice s's weight for head h.
    ok = lane < live
    for t in range(2):
        h = warp + 4 * t
        first_stat = (groups * (1 + GROUP * HEAD_DIM) + g * splits * GROUP + lane * GROUP + h) & INDEX_MASK
        m = ws[first_stat] if ok else float32(-math.inf)
        l = ws[first_stat + groups * splits * GROUP] if ok else float32(0.0)
        best = _warp_max(m)
        weight = math.exp(m - best) if ok else float32(0.0)
        inverse = float32(1.0) / _warp_sum(weight * l)
        a0 = float32(0.0)
        a1 = float32(0.0)
        a2 = float32(0.0)
        a3 = float32(0.0)
        at_o = (o_base + h * HEAD_DIM + lane) & INDEX_MASK
        for s in range(live):
            w = cuda.shfl_sync(FULL_MASK, weight, s)
            here = at_o + s * (GROUP * HEAD_DIM)
            a0 += w * ws[uint64(here)]
            a1 += w * ws[uint64(here + 32)]
            a2 += w * ws[uint64(here + 64)]
            a3 += w * ws[uint64(here + 96)]
        o = (groups + (g * GROUP + h) * HEAD_DIM + 4 * lane) & INDEX_MASK
        ws[o] = a0 * inverse
        ws[o + 1] = a1 * inverse
        ws[o + 2] = a2 * inverse
        ws[o + 3] = a3 * inverse


_launches = {}


def solve(q, k_cache, v_cache, block_table, seq_lens):
    batch, query_heads, dim = q.shape
    num_pages, page_size, kv_heads = k_cache.shape[0], k_cache.shape[1], k_cache.shape[2]
    assert dim == HEAD_DIM and page_size == PAGE and kv_heads == KV_HEADS and query_heads == GROUP * kv_heads
    assert ROW_STRIDE == KV_HEADS * WORDS
    assert q.dtype == torch.bfloat16 and k_cache.dtype == torch.bfloat16 and v_cache.dtype == torch.bfloat16
    context = block_table.shape[1] * PAGE
    splits = (context + TILE - 1) // TILE
    groups = batch * kv_heads
    assert splits <= MAX_SPLITS and num_pages * PAGE * kv_heads * WORDS <= INDEX_MASK
    key = (splits, groups)
    launch = _launches.get(key)
    if launch is None:
        launch = _launches[key] = _decode[(splits, groups), THREADS]
    ws = torch.empty(groups * (1 + GROUP * HEAD_DIM + splits * GROUP * (2 + HEAD_DIM)), device=q.device,
                     dtype=torch.float32)
    ws[:groups].zero_()  # the counters; everything else is written before it is read
    launch(q.contiguous().view(-1).view(torch.int64), k_cache.contiguous().view(-1).view(torch.int64),
           v_cache.contiguous().view(-1).view(torch.int64), block_table.to(torch.int32).contiguous().view(-1),
           seq_lens.to(torch.int32), ws)
    return ws[groups:groups * (1 + GROUP * HEAD_DIM)].view(batch, query_heads, dim).to(torch.bfloat16)
