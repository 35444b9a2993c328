"""numba-cuda solution for 41_qwen3_paged_decode_large_batch: split-sequence flash decoding over the paged cache in one
kernel launch, the bf16 pages read as 64-bit words and widened in the kernel (attention/07's shipped kernel, with
256-row slices so that an 8192-token context is at most 32 slices, and without numba's negative-index code).

One block of 128 threads per (256-row slice = 16 pages, sequence and KV head) runs the KV head's 8 query heads over
its slice, so each cached row comes from memory once for all 8 heads (the shipped solution widened both 2.15 GB page
pools to float32 with torch every call, then ran one block per (sequence, query head): every row read again by the 8
heads' blocks, one row per thread, uncoalesced, and one global load per FMA in the weighted sum). Each warp owns 4
pages of the slice and looks their ids up in the block table first (pages past the sequence's end are not looked
up), then reads a page's 16 rows with one 64-bit load per lane and row (4 bf16 dims a lane), all 16 loaded before
any is used. Scores: each lane dots its 4 dims with the 8 queries (kept in registers), and a reduce-scatter over the
warp (9 shuffles) leaves each head's score in 4 lanes. The slice's softmax is one warp per 2 heads. Weighted sum:
each lane accumulates its 4 dims for the 8 heads (the first page of value words is loaded before the softmax
barrier), and the 4 warps' sums are added through shared memory. The slice's unnormalised output, max and sum go to
a float32 workspace; the last block of a (sequence, KV head) to finish (an atomic counter at the workspace's head,
zeroed by torch) merges that group's slices into a float32 result in the workspace, which torch casts to bf16. A
bf16 is the top half of a float32, so a word's four values are two shifts and two masks. Rows past a sequence's end
are neither looked up nor loaded: their scores are -inf and their pages skipped in the weighted sum.

Two compile-level changes from 07's kernel. The indices of the hot loads and shared-memory accesses are cast to
uint64 at the point of use: numba adds an array's length to a negative signed index (Python's wraparound), which
cost ~5 integer instructions per access; for unsigned indices it emits nothing. And the KV head count is a module
constant (8; solve checks it), so a page's 16 row loads are one address plus immediate offsets. ptxas (sm_90) counts
per 16-row page: scores 1240 instructions (1718 with 07's indexing), weighted sum 696 (1641).
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
def _score(word, qf, part, up16, up8, up4):
    """The 8 heads' dot products of one row, each lane's 4 dims, reduced over the warp: every lane returns the score
    of head (lane >> 2) & 7 (a reduce-scatter: halves of the heads are exchanged at each step, then the rest summed).
    part is 4 floats of scratch (registers once inlined)."""
    lo = int32(word)
    hi = int32(word >> 32)
    k0 = libdevice.int_as_float(int32(lo << 16))
    k1 = libdevice.int_as_float(int32(lo & -65536))
    k2 = libdevice.int_as_float(int32(hi << 16))
    k3 = libdevice.int_as_float(int32(hi & -65536))
    # lanes 0-15 keep heads 0-3, lanes 16-31 heads 4-7
    for j in range(4):
        low = qf[4 * j] * k0 + qf[4 * j + 1] * k1 + qf[4 * j + 2] * k2 + qf[4 * j + 3] * k3
        high = qf[4 * j + 16] * k0 + qf[4 * j + 17] * k1 + qf[4 * j + 18] * k2 + qf[4 * j + 19] * k3
        part[j] = (high if up16 else low) + cuda.shfl_xor_sync(FULL_MASK, low if up16 else high, 16)
    # then bit 3 picks 2 of those 4, bit 2 one of the 2
    x0 = part[0]
    x1 = part[1]
    x2 = part[2]
    x3 = part[3]
    c0 = (x2 if up8 else x0) + cuda.shfl_xor_sync(FULL_MASK, x0 if up8 else x2, 8)
    c1 = (x3 if up8 else x1) + cuda.shfl_xor_sync(FULL_MASK, x1 if up8 else x3, 8)
    d = (c1 if up4 else c0) + cuda.shfl_xor_sync(FULL_MASK, c0 if up4 else c1, 4)
    d += cuda.shfl_xor_sync(FULL_MASK, d, 2)
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
    at = cuda.local.array(WARP_PAGES, int64)  # this lane's word of each page's row 0
    for p in range(WARP_PAGES):
        page = block_table[page_at + p] if start + first + p * PAGE < end else 0
        at[p] = ((page * PAGE * KV_HEADS + kv) * WORDS + lane) & INDEX_MASK

    # the 8 queries' 4 dims of this lane, times the softmax scale
    qf = cuda.local.array(32, float32)
    scale = float32(1.0 / math.sqrt(HEAD_DIM))
    for h in range(GROUP):
        word = q_words[((g * GROUP + h) * WORDS + lane) & INDEX_MASK]
        lo = int32(word)
        hi = int32(word >> 32)
        qf[4 * h] = libdevice.int_as_float(int32(lo << 16)) * scale
        qf[4 * h + 1] = libdevice.int_as_float(int32(lo & -65536)) * scale
        qf[4 * h + 2] = libdevice.int_as_float(int32(hi << 16)) * scale
        qf[4 * h + 3] = libdevice.int_as_float(int32(hi & -65536)) * scale

    up16 = (lane & 16) != 0
    up8 = (lane & 8) != 0
    up4 = (lane & 4) != 0
    writer = (lane & 3) == 0
    my_head_row = ((lane >> 2) & 7) * TILE  # this lane's head's row of scores
    buf = cuda.local.array(PAGE, int64)
    part = cuda.local.array(4, float32)

    # Scores of the warp's 64 rows, a page (16 loads) at a time; a page past the end is only marked -inf.
    for p in range(WARP_PAGES):
        r0 = first + p * PAGE
        rows = int32(min(end - start - r0, PAGE))  # valid rows of the page (none when <= 0)
        my_row = my_head_row + r0
        if rows > 0:
            base = at[p]
            for i in range(PAGE):
                buf[i] = k_words[uint64(base + i * ROW_STRIDE)] if i < rows else int64(0)
            for i in range(PAGE):
                s = _score(buf[i], qf, part, up16, up8, up4)
                if writer:
                    scores[uint64(my_row + i)] = s if i < rows else float32(-math.inf)
        elif writer:
            for i in range(PAGE):
                scores[uint64(my_row + i)] = float32(-math.inf)

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
