"""numba-cuda solution for 11_speculative_verify_attention: split-sequence flash decoding in one kernel launch with
three tensor arguments, a block's 16 query rows the 4 draft tokens x 4 heads of one KV head, the fp16 cache read as
64-bit words and widened in the kernel.

One block of 128 threads per (256-row slice of the cache, sequence and KV head) runs all 16 query rows of its KV
head over its slice, so each cached row comes from memory once for 4 tokens and 4 heads (an earlier solution ran one
block per (sequence, token, query head): each row was read again by 16 blocks, one row per thread, uncoalesced,
with one global load per FMA in the weighted sum). A warp reads a whole 256-byte row with one 64-bit load per lane
(4 fp16 dims a lane), 8 rows loaded before any is used. Scores: each lane dots its 4 dims with the 16 query rows
(kept in registers), and a reduce-scatter over the warp (16 shuffles) leaves each query row's score in 2 lanes;
cache position p is visible to token t when p < length - 3 + t. Scores are stored [cache row][query row], the
scoring lanes keep each query row's max, and each thread then exponentiates 32 of the slice's 4096 scores.
Weighted sum: each lane accumulates its 4 dims for the 16 rows, and the 4 warps' sums are added through shared
memory (the same buffer as the scores). The slice's unnormalised output, max and sum go to a float32 workspace; the
last block of a (sequence, KV head) to finish (an atomic counter) merges that group's slices into a float32 result
in the workspace, which torch casts to fp16. A call is one numba launch (numba's launch costs far more host time
than the kernel runs, much of it converting each tensor argument), and it takes three tensors: the workspace and the
two caches. torch.cat writes the lengths, zeroed counters and the queries' bits, as int32, into the head of the
workspace, and the kernel reads them back with float_as_int (a move, so the bits are exact). A query row that sees
no row of a slice (token 0 in a slice holding only the last 3 positions) gets weight 0 there.

fp16 is widened with integer operations: a half's magnitude bits shifted left by 13, with its sign moved to bit 31,
are the float32 bits of the half's value times 2^-112 (exact, subnormals included), and the 2^112 is folded into the
queries (for the scores) and the softmax weights (for the weighted sum), so no conversion instruction is needed.
Rows past a sequence's end are masked to -inf in the scores and their value words zeroed, so stale rows cannot leak.
"""

import math

import torch
from numba import cuda, float32, int32, int64
from numba.cuda import libdevice

TOKENS = 4  # draft tokens per sequence
GROUP = 4  # query heads per KV head
ROWS = 16  # TOKENS * GROUP query rows per block, row r = token r // 4, head r % 4 of the KV head
HEAD_DIM = 128
WORDS = 32  # 64-bit words per cached row: four fp16 each, one per lane
TILE = 256  # cache rows per block
THREADS = 128
WARP_ROWS = 64  # TILE // 4 warps: the rows each warp loads
BATCH = 8  # rows a warp loads before it uses them
SHARED = 8192  # floats: scores / weights [cache row][row] (TILE * ROWS), later the warps' sums (4 * ROWS * HEAD_DIM)
MAX_SPLITS = 32  # slices per sequence: one per lane in the merge
FULL_MASK = 0xFFFFFFFF
INDEX_MASK = 0x7FFFFFFF  # indices fit in 31 bits (solve checks): masking proves them non-negative to the compiler
POW112 = 2.0 ** 112


@cuda.jit(device=True)
def _half_lo(x):
    """The low fp16 of a 32-bit word as float32, times 2^-112."""
    return libdevice.int_as_float(int32(((x & 0x7FFF) << 13) | ((x & 0x8000) << 16)))


@cuda.jit(device=True)
def _half_hi(x):
    """The high fp16 of a 32-bit word as float32, times 2^-112."""
    return libdevice.int_as_float(int32(((x >> 3) & 0x0FFFE000) | (x & -2147483648)))


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
def _score(word, qf, a, up16, up8, up4, up2):
    """The 16 query rows' dot products with one cache row, each lane's 4 dims, reduced over the warp: every lane
    returns the score of query row (lane >> 1) & 15 (a reduce-scatter: at each step a lane keeps half of its rows
    and trades the other half with its partner, then the pair adds up). a is 8 floats of scratch (registers once
    inlined)."""
    lo = int32(word)
    hi = int32(word >> 32)
    k0 = _half_lo(lo)
    k1 = _half_hi(lo)
    k2 = _half_lo(hi)
    k3 = _half_hi(hi)
    # lanes 0-15 keep rows 0-7, lanes 16-31 rows 8-15
    for j in range(8):
        low = qf[4 * j] * k0 + qf[4 * j + 1] * k1 + qf[4 * j + 2] * k2 + qf[4 * j + 3] * k3
        high = qf[4 * j + 32] * k0 + qf[4 * j + 33] * k1 + qf[4 * j + 34] * k2 + qf[4 * j + 35] * k3
        a[j] = (high if up16 else low) + cuda.shfl_xor_sync(FULL_MASK, low if up16 else high, 16)
    # then bit 3 keeps 4 of those 8, bit 2 two of the 4, bit 1 one of the 2
    for j in range(4):
        x = a[j]
        y = a[j + 4]
        a[j] = (y if up8 else x) + cuda.shfl_xor_sync(FULL_MASK, x if up8 else y, 8)
    for j in range(2):
        x = a[j]
        y = a[j + 2]
        a[j] = (y if up4 else x) + cuda.shfl_xor_sync(FULL_MASK, x if up4 else y, 4)
    x = a[0]
    y = a[1]
    d = (y if up2 else x) + cuda.shfl_xor_sync(FULL_MASK, x if up2 else y, 2)
    d += cuda.shfl_xor_sync(FULL_MASK, d, 1)
    return d


@cuda.jit(device=True)
def _accumulate(word, acc, weights, row):
    """acc[4 r + c] += weight[row, r] * value[row, 4 lane + c] (weights carry the 2^112 the widening leaves out)."""
    lo = int32(word)
    hi = int32(word >> 32)
    v0 = _half_lo(lo)
    v1 = _half_hi(lo)
    v2 = _half_lo(hi)
    v3 = _half_hi(hi)
    for r in range(ROWS):
        p = weights[(row & (TILE - 1)) * ROWS + r]
        acc[4 * r] += p * v0
        acc[4 * r + 1] += p * v1
        acc[4 * r + 2] += p * v2
        acc[4 * r + 3] += p * v3


@cuda.jit(max_registers=128)  # 4 blocks an SM
def _verify(ws, k_words, v_words, batch):
    """Block (split, g) with g = b * kv_heads + kv: cache rows [split * TILE, +TILE) of sequence b, KV head kv.
    ws: float32; its head holds int32 bits: [batch] lengths, [groups] zeroed counters (counted as floats), the fp16
    queries' bits as pairs [B, T, H, D / 2]; then the float32 result [B, T, H, D], the slices' max [g, split, r],
    sum [g, split, r] and unnormalised output [g, split, r, dim] (dim stored as c * 32 + lane for dim 4 lane + c).
    k_words, v_words: the fp16 caches [B, S, Hkv, D] as flat 64-bit words."""
    buf_s = cuda.shared.array(SHARED, float32)
    maxes = cuda.shared.array(64, float32)  # [warp][query row]: the max of each warp's 64 rows
    sums = cuda.shared.array(64, float32)  # [warp][query row]: sums of weights
    last = cuda.shared.array(1, int32)
    tid = cuda.threadIdx.x
    lane = tid & 31
    warp = (tid >> 5) & 3
    split = cuda.blockIdx.x
    g = cuda.blockIdx.y
    splits = cuda.gridDim.x
    groups = cuda.gridDim.y
    kv_heads = groups // batch
    context = k_words.shape[0] // (groups * WORDS)
    b = g // kv_heads
    kv = g - b * kv_heads
    start = split * TILE
    length = min(libdevice.float_as_int(ws[b]), context)
    end = length  # cache rows past the end are stale; token t sees rows < length - 3 + t
    if start >= end:  # the whole block leaves together, before any barrier
        return
    live = (end + TILE - 1) // TILE  # slices of this sequence that run
    heads = GROUP * kv_heads
    res = batch + groups * (1 + ROWS * HEAD_DIM // 2)  # where the float32 results start

    # the 16 query rows' 4 dims of this lane, times softmax scale and 2^112 (two steps: 2^224 is no float32)
    qf = cuda.local.array(64, float32)
    scale = float32(POW112 / math.sqrt(HEAD_DIM))
    for r in range(ROWS):
        at = (batch + groups + ((b * TOKENS + (r >> 2)) * heads + kv * GROUP + (r & 3)) * (HEAD_DIM // 2) + 2 * lane)
        lo = libdevice.float_as_int(ws[at & INDEX_MASK])
        hi = libdevice.float_as_int(ws[(at + 1) & INDEX_MASK])
        qf[4 * r] = _half_lo(lo) * float32(POW112) * scale
        qf[4 * r + 1] = _half_hi(lo) * float32(POW112) * scale
        qf[4 * r + 2] = _half_lo(hi) * float32(POW112) * scale
        qf[4 * r + 3] = _half_hi(hi) * float32(POW112) * scale

    up16 = (lane & 16) != 0
    up8 = (lane & 8) != 0
    up4 = (lane & 4) != 0
    up2 = (lane & 2) != 0
    writer = (lane & 1) == 0
    my_row = (lane >> 1) & 15
    my_limit = length - 3 + (my_row >> 2)  # the query row's token sees cache rows below this
    first = warp * WARP_ROWS  # the warp's first row within the slice
    row_stride = (kv_heads * WORDS) & 0xFFFF
    row_base = (((b * context + start + first) * kv_heads + kv) * WORDS + lane) & INDEX_MASK
    buf = cuda.local.array(BATCH, int64)
    a = cuda.local.array(8, float32)

    # Scores of the warp's 64 rows, 8 loads in flight at a time, stored [cache row][query row]; each writer lane
    # also keeps its query row's running max.
    top = float32(-math.inf)
    for n in range(WARP_ROWS // BATCH):
        r0 = (first + n * BATCH) & (TILE - 1)
        at = (row_base + n * BATCH * row_stride) & INDEX_MASK
        for i in range(BATCH):
            buf[i] = k_words[at + i * row_stride]  # rows past the end lie inside the cache: loaded, masked below
        seen = my_limit - start - r0  # rows i < seen of this batch are visible to my_row
        for i in range(BATCH):
            s = _score(buf[i], qf, a, up16, up8, up4, up2)
            s = s if i < seen else float32(-math.inf)
            top = max(top, s)
            if writer:
                buf_s[(r0 + i) * ROWS + my_row] = s
    if writer:
        maxes[warp * ROWS + my_row] = top

    # The first batch of value words is loaded before the softmax, so it is in flight across it.
    for i in range(BATCH):
        word = v_words[row_base + i * row_stride]
        buf[i] = word if start + first + i < end else int64(0)
    cuda.syncthreads()

    # Softmax over the slice: thread tid handles query row tid % 16 for cache rows tid // 16 + 8 k (so a warp's
    # accesses are 128 consecutive floats); a row that sees nothing here gets weights 0 and max -inf.
    r = tid & (ROWS - 1)
    top = max(max(maxes[r], maxes[ROWS + r]), max(maxes[2 * ROWS + r], maxes[3 * ROWS + r]))
    shift = top if top > float32(-math.inf) else float32(0.0)
    total = float32(0.0)
    for k in range(TILE * ROWS // THREADS):
        e = tid + THREADS * k
        p = math.exp(buf_s[e] - shift)
        total += p
        buf_s[e] = p * float32(POW112)
    total += cuda.shfl_xor_sync(FULL_MASK, total, 16)  # lanes l and l + 16 share a query row
    if lane < ROWS:
        sums[warp * ROWS + r] = total
    cuda.syncthreads()
    if tid < ROWS:  # the slice's max and sum of query row tid
        stat = res + groups * ROWS * HEAD_DIM + (g * splits + split) * ROWS + tid  # sum: groups * splits * ROWS on
        ws[stat] = top
        ws[stat + groups * splits * ROWS] = ((sums[tid] + sums[ROWS + tid]) +
                                            (sums[2 * ROWS + tid] + sums[3 * ROWS + tid]))

    # Weighted sum of the warp's 64 value rows: lane owns dims 4 lane .. 4 lane + 3 of the 16 query rows.
    acc = cuda.local.array(64, float32)
    for j in range(64):
        acc[j] = float32(0.0)
    for i in range(BATCH):
        _accumulate(buf[i], acc, buf_s, first + i)
    for n in range(1, WARP_ROWS // BATCH):
        r0 = (first + n * BATCH) & (TILE - 1)
        at = (row_base + n * BATCH * row_stride) & INDEX_MASK
        valid = end - start - r0  # rows i < valid of this batch lie before the end
        for i in range(BATCH):
            word = v_words[at + i * row_stride]
            buf[i] = word if i < valid else int64(0)
        for i in range(BATCH):
            _accumulate(buf[i], acc, buf_s, r0 + i)
    cuda.syncthreads()  # every warp is done with the weights before the buffer takes the warps' sums
    for r in range(ROWS):
        for c in range(4):
            buf_s[warp * 2048 + r * HEAD_DIM + c * 32 + lane] = acc[4 * r + c]
    cuda.syncthreads()

    # Thread (warp w, lane) adds the 4 warps' sums of rows w + 4 t, dims 4 lane + c, and stores them.
    o_base = res + groups * (ROWS * HEAD_DIM + 2 * splits * ROWS) + HEAD_DIM * ROWS * g * splits  # slice 0 of g
    for t in range(4):
        r = warp + 4 * t
        mine = (o_base + (split * ROWS + r) * HEAD_DIM + lane) & INDEX_MASK
        for c in range(4):
            k = r * HEAD_DIM + c * 32 + lane
            ws[mine + c * 32] = (buf_s[k] + buf_s[k + 2048]) + (buf_s[k + 4096] + buf_s[k + 6144])
    cuda.threadfence()  # this block's partial results are visible device-wide before it is counted
    cuda.syncthreads()
    if tid == 0:
        done = cuda.atomic.add(ws, batch + g, float32(1.0))  # the zero bits are 0.0
        last[0] = 1 if done == float32(live - 1) else 0
    cuda.syncthreads()
    if last[0] == 0:
        return
    cuda.threadfence()

    # The last block of group g merges its live slices: lane s holds slice s's weight for query row r.
    ok = lane < live
    for t in range(4):
        r = warp + 4 * t
        first_stat = (res + groups * ROWS * HEAD_DIM + g * splits * ROWS + lane * ROWS + r) & INDEX_MASK
        m = ws[first_stat] if ok else float32(-math.inf)
        l = ws[first_stat + groups * splits * ROWS] if ok else float32(0.0)
        best = _warp_max(m)  # finite: slice 0 holds visible rows for every token
        weight = math.exp(m - best) if ok else float32(0.0)
        inverse = float32(1.0) / _warp_sum(weight * l)
        a0 = float32(0.0)
        a1 = float32(0.0)
        a2 = float32(0.0)
        a3 = float32(0.0)
        at = (o_base + r * HEAD_DIM + lane) & INDEX_MASK
        for s in range(live):
            w = cuda.shfl_sync(FULL_MASK, weight, s)
            here = at + s * (ROWS * HEAD_DIM)
            a0 += w * ws[here]
            a1 += w * ws[here + 32]
            a2 += w * ws[here + 64]
            a3 += w * ws[here + 96]
        o = (res + ((b * TOKENS + (r >> 2)) * heads + kv * GROUP + (r & 3)) * HEAD_DIM + 4 * lane) & INDEX_MASK
        ws[o] = a0 * inverse
        ws[o + 1] = a1 * inverse
        ws[o + 2] = a2 * inverse
        ws[o + 3] = a3 * inverse


_launches = {}
_zeros = {}


def solve(q, k_cache, v_cache, cache_lens):
    batch, tokens, query_heads, dim = q.shape
    context, kv_heads = k_cache.shape[1], k_cache.shape[2]
    assert tokens == TOKENS and dim == HEAD_DIM and query_heads == GROUP * kv_heads and context % TILE == 0
    assert q.dtype == torch.float16 and k_cache.dtype == torch.float16 and v_cache.dtype == torch.float16
    splits = context // TILE
    groups = batch * kv_heads
    assert splits <= MAX_SPLITS and groups * context * WORDS <= INDEX_MASK
    key = (splits, groups)
    launch = _launches.get(key)
    if launch is None:
        launch = _launches[key] = _verify[(splits, groups), THREADS]
    zeros = _zeros.get((q.device, groups))
    if zeros is None:  # read by the concatenation only, never written
        zeros = _zeros[(q.device, groups)] = torch.zeros(groups, device=q.device, dtype=torch.int32)
    res = batch + groups * (1 + ROWS * HEAD_DIM // 2)  # the int32 head's length
    results = groups * ROWS * HEAD_DIM
    ws = torch.empty(res + results + groups * splits * ROWS * (2 + HEAD_DIM), device=q.device, dtype=torch.float32)
    torch.cat((cache_lens.to(torch.int32), zeros, q.contiguous().view(-1).view(torch.int32)),
              out=ws[:res].view(torch.int32))
    launch(ws, k_cache.contiguous().view(-1).view(torch.int64), v_cache.contiguous().view(-1).view(torch.int64), batch)
    return ws[res:res + results].view(batch, tokens, query_heads, dim).to(torch.float16)
