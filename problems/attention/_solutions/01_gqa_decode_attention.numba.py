"""numba-cuda solution for 01_gqa_decode_attention: split-sequence flash decoding in one kernel launch with three
tensor arguments, the fp16 cache read as 64-bit words and widened in the kernel.

One block of 128 threads per (128-row slice of the cache, sequence and KV head) runs the KV head's 4 query heads
over its slice, so each cached row comes from memory once for all 4 heads (an earlier solution ran one block per
(sequence, query head): each row was read again by the 4 heads' blocks, one row per thread, uncoalesced, with one
global load per FMA in the weighted sum). A warp reads a whole 256-byte row with one 64-bit load per lane (4 fp16
dims a lane); each warp loads its 32 rows of K (then of V) in batches of 16 before using them, so many loads are in
flight. Scores: each lane dots its 4 dims with the 4 queries (kept in registers), and a reduce-scatter over the
warp (6 shuffles) leaves each head's score in 8 lanes. The slice's softmax (max, exp, sum) is one warp per head.
Weighted sum: each lane accumulates its 4 dims for the 4 heads, and the 4 warps' sums are added through shared
memory. The slice's unnormalised output, max and sum go to a float32 workspace; the last block of a (sequence, KV
head) to finish (an atomic counter) merges that group's slices into a float32 result in the workspace, which torch
slices and casts to fp16. A call is one numba launch (numba's launch costs far more host time than the kernel runs,
much of it converting each tensor argument), and it takes three tensors: the workspace and the two caches. torch.cat
writes the lengths, zeroed counters and the queries' bits, as int32, into the head of the workspace, and the kernel
reads them back with float_as_int (a move, so the bits are exact).

fp16 is widened with integer operations: a half's magnitude bits shifted left by 13, with its sign moved to bit 31,
are the float32 bits of the half's value times 2^-112 (exact, subnormals included), and the 2^112 is folded into the
queries (for the scores) and the softmax weights (for the weighted sum), so no conversion instruction is needed.
Rows past a sequence's end are masked to -inf in the scores and their value words zeroed, so stale rows cannot leak.
"""

import math

import torch
from numba import cuda, float32, int32, int64
from numba.cuda import libdevice

GROUP = 4  # query heads per KV head
HEAD_DIM = 128
WORDS = 32  # 64-bit words per cached row: four fp16 each, one per lane
TILE = 128  # cache rows per block
THREADS = 128
WARP_ROWS = 32  # TILE // 4 warps: the rows each warp loads
BATCH = 16  # rows a warp loads before it uses them
SCORES = 512  # GROUP * TILE: scores, then softmax weights, [head][row]
PARTIAL = 2048  # 4 warps * GROUP * HEAD_DIM: the warps' weighted sums before they are added
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
def _score(word, qf, up16, up8):
    """The 4 heads' dot products of one row, each lane's 4 dims, reduced over the warp: every lane returns the score
    of head (lane >> 3) & 3 (a reduce-scatter: halves of the heads are exchanged, then the rest summed)."""
    lo = int32(word)
    hi = int32(word >> 32)
    k0 = _half_lo(lo)
    k1 = _half_hi(lo)
    k2 = _half_lo(hi)
    k3 = _half_hi(hi)
    s0 = qf[0] * k0 + qf[1] * k1 + qf[2] * k2 + qf[3] * k3
    s1 = qf[4] * k0 + qf[5] * k1 + qf[6] * k2 + qf[7] * k3
    s2 = qf[8] * k0 + qf[9] * k1 + qf[10] * k2 + qf[11] * k3
    s3 = qf[12] * k0 + qf[13] * k1 + qf[14] * k2 + qf[15] * k3
    # lanes 0-15 keep heads 0 and 1, lanes 16-31 heads 2 and 3
    a = (s2 if up16 else s0) + cuda.shfl_xor_sync(FULL_MASK, s0 if up16 else s2, 16)
    b = (s3 if up16 else s1) + cuda.shfl_xor_sync(FULL_MASK, s1 if up16 else s3, 16)
    # then lanes with bit 3 clear keep the first of the two, the others the second
    c = (b if up8 else a) + cuda.shfl_xor_sync(FULL_MASK, a if up8 else b, 8)
    c += cuda.shfl_xor_sync(FULL_MASK, c, 4)
    c += cuda.shfl_xor_sync(FULL_MASK, c, 2)
    c += cuda.shfl_xor_sync(FULL_MASK, c, 1)
    return c


@cuda.jit(device=True)
def _accumulate(word, acc, weights, row):
    """acc[4 h + c] += weight[h, row] * value[row, 4 lane + c] (weights carry the 2^112 the widening leaves out)."""
    lo = int32(word)
    hi = int32(word >> 32)
    v0 = _half_lo(lo)
    v1 = _half_hi(lo)
    v2 = _half_lo(hi)
    v3 = _half_hi(hi)
    for h in range(GROUP):
        p = weights[h * TILE + row]
        acc[4 * h] += p * v0
        acc[4 * h + 1] += p * v1
        acc[4 * h + 2] += p * v2
        acc[4 * h + 3] += p * v3


@cuda.jit(max_registers=72)  # 7 blocks an SM
def _decode(ws, k_words, v_words, batch):
    """Block (split, g) with g = b * kv_heads + kv: cache rows [split * TILE, +TILE) of sequence b, KV head kv.
    ws: float32; its head holds int32 bits: [batch] lengths, [groups] zeroed counters (counted as floats), the fp16
    queries' bits as pairs [b, head, dim / 2]; then the float32 result [groups, GROUP, HEAD_DIM], the slices' max
    [g, split, h], sum [g, split, h] and unnormalised output [g, split, h, dim] (dim stored as c * 32 + lane for dim
    4 lane + c). k_words, v_words: the fp16 caches as flat 64-bit words."""
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
    kv_heads = groups // batch
    context = k_words.shape[0] // (groups * WORDS)
    b = g // kv_heads
    start = split * TILE
    end = min(libdevice.float_as_int(ws[b]), context)
    if start >= end:  # the whole block leaves together, before any barrier
        return
    res = batch + groups * (1 + GROUP * HEAD_DIM // 2)  # where the float32 results start
    live = (end + TILE - 1) // TILE  # slices of this sequence that run

    # the 4 queries' 4 dims of this lane, times softmax scale and 2^112 (two steps: 2^224 is no float32)
    qf = cuda.local.array(16, float32)
    scale = float32(POW112 / math.sqrt(HEAD_DIM))
    q_at = (batch + groups + g * (GROUP * HEAD_DIM // 2) + 2 * lane) & INDEX_MASK
    for h in range(GROUP):
        lo = libdevice.float_as_int(ws[q_at + h * (HEAD_DIM // 2)])
        hi = libdevice.float_as_int(ws[q_at + h * (HEAD_DIM // 2) + 1])
        qf[4 * h] = _half_lo(lo) * float32(POW112) * scale
        qf[4 * h + 1] = _half_hi(lo) * float32(POW112) * scale
        qf[4 * h + 2] = _half_lo(hi) * float32(POW112) * scale
        qf[4 * h + 3] = _half_hi(hi) * float32(POW112) * scale

    up16 = (lane & 16) != 0
    up8 = (lane & 8) != 0
    writer = (lane & 7) == 0
    my_head = (lane >> 3) & 3
    first = warp * WARP_ROWS  # the warp's first row within the slice
    row_base = (g * context + start + first) * WORDS + lane  # word of this lane in the warp's first row
    buf = cuda.local.array(BATCH, int64)

    # Scores of the warp's 32 rows, two batches of 16 loads in flight.
    for half in range(WARP_ROWS // BATCH):
        r0 = half * BATCH
        at = (row_base + r0 * WORDS) & INDEX_MASK
        for i in range(BATCH):
            buf[i] = k_words[at + i * WORDS]  # rows past the end lie inside the cache: loaded, masked below
        for i in range(BATCH):
            s = _score(buf[i], qf, up16, up8)
            row = first + r0 + i
            if writer:
                scores[my_head * TILE + row] = s if start + row < end else float32(-math.inf)

    # The first batch of value words is loaded before the softmax, so it is in flight across it.
    at = row_base & INDEX_MASK
    for i in range(BATCH):
        word = v_words[at + i * WORDS]
        buf[i] = word if start + first + i < end else int64(0)
    cuda.syncthreads()

    # Softmax over the slice: warp h owns head h (row 0 of a running slice is valid, so the max is finite).
    h = warp
    x0 = scores[h * TILE + lane]
    x1 = scores[h * TILE + lane + 32]
    x2 = scores[h * TILE + lane + 64]
    x3 = scores[h * TILE + lane + 96]
    top = _warp_max(max(max(x0, x1), max(x2, x3)))
    p0 = math.exp(x0 - top)
    p1 = math.exp(x1 - top)
    p2 = math.exp(x2 - top)
    p3 = math.exp(x3 - top)
    total = _warp_sum((p0 + p1) + (p2 + p3))
    scores[h * TILE + lane] = p0 * float32(POW112)
    scores[h * TILE + lane + 32] = p1 * float32(POW112)
    scores[h * TILE + lane + 64] = p2 * float32(POW112)
    scores[h * TILE + lane + 96] = p3 * float32(POW112)
    # this slice's max (after the results); its sum lies groups * splits * GROUP further on
    stat = res + groups * GROUP * HEAD_DIM + (g * splits + split) * GROUP + h
    if lane == 0:
        ws[stat] = top
        ws[stat + groups * splits * GROUP] = total
    cuda.syncthreads()

    # Weighted sum of the warp's 32 value rows: lane owns dims 4 lane .. 4 lane + 3 of the 4 heads.
    acc = cuda.local.array(16, float32)
    for j in range(16):
        acc[j] = float32(0.0)
    for i in range(BATCH):
        _accumulate(buf[i], acc, scores, first + i)
    at = (row_base + BATCH * WORDS) & INDEX_MASK
    for i in range(BATCH):
        word = v_words[at + i * WORDS]
        buf[i] = word if start + first + BATCH + i < end else int64(0)
    for i in range(BATCH):
        _accumulate(buf[i], acc, scores, first + BATCH + i)
    for j in range(GROUP):
        for c in range(4):
            partial[warp * 512 + j * HEAD_DIM + c * 32 + lane] = acc[4 * j + c]
    cuda.syncthreads()

    # Thread (warp h, lane) adds the 4 warps' sums of head h, dims 4 lane + c, and stores them.
    o_base = res + groups * GROUP * HEAD_DIM + 2 * groups * splits * GROUP + HEAD_DIM * GROUP * g * splits  # g, 0
    mine = (o_base + (split * GROUP + h) * HEAD_DIM + lane) & INDEX_MASK
    for c in range(4):
        k = h * HEAD_DIM + c * 32 + lane
        ws[mine + c * 32] = (partial[k] + partial[k + 512]) + (partial[k + 1024] + partial[k + 1536])
    cuda.threadfence()  # this block's partial results are visible device-wide before it is counted
    cuda.syncthreads()
    if tid == 0:
        done = cuda.atomic.add(ws, batch + g, float32(1.0))  # the zero bits are 0.0
        last[0] = 1 if done == float32(live - 1) else 0
    cuda.syncthreads()
    if last[0] == 0:
        return
    cuda.threadfence()

    # The last block of group g merges its live slices: lane s holds slice s's weight for head h.
    ok = lane < live
    first_stat = (res + groups * GROUP * HEAD_DIM + g * splits * GROUP + lane * GROUP + h) & INDEX_MASK
    m = ws[first_stat] if ok else float32(-math.inf)
    l = ws[first_stat + groups * splits * GROUP] if ok else float32(0.0)
    best = _warp_max(m)
    weight = math.exp(m - best) if ok else float32(0.0)
    inverse = float32(1.0) / _warp_sum(weight * l)
    a0 = float32(0.0)
    a1 = float32(0.0)
    a2 = float32(0.0)
    a3 = float32(0.0)
    at = (o_base + h * HEAD_DIM + lane) & INDEX_MASK
    for s in range(live):
        w = cuda.shfl_sync(FULL_MASK, weight, s)
        here = at + s * (GROUP * HEAD_DIM)
        a0 += w * ws[here]
        a1 += w * ws[here + 32]
        a2 += w * ws[here + 64]
        a3 += w * ws[here + 96]
    o = (res + (g * GROUP + h) * HEAD_DIM + 4 * lane) & INDEX_MASK  # the float32 result, [b, query head, dim]
    ws[o] = a0 * inverse
    ws[o + 1] = a1 * inverse
    ws[o + 2] = a2 * inverse
    ws[o + 3] = a3 * inverse


_launches = {}
_zeros = {}


def solve(q, k_cache, v_cache, seq_lens):
    batch, query_heads, dim = q.shape
    kv_heads, context = k_cache.shape[1], k_cache.shape[2]
    assert dim == HEAD_DIM and query_heads == GROUP * kv_heads and context % TILE == 0
    assert q.dtype == torch.float16 and k_cache.dtype == torch.float16 and v_cache.dtype == torch.float16
    splits = context // TILE
    groups = batch * kv_heads
    assert splits <= MAX_SPLITS and groups * context * WORDS <= INDEX_MASK
    key = (splits, groups)
    launch = _launches.get(key)
    if launch is None:
        launch = _launches[key] = _decode[(splits, groups), THREADS]
    zeros = _zeros.get((q.device, groups))
    if zeros is None:  # read by the concatenation only, never written
        zeros = _zeros[(q.device, groups)] = torch.zeros(groups, device=q.device, dtype=torch.int32)
    res = batch + groups * (1 + GROUP * HEAD_DIM // 2)  # the int32 head's length
    results = groups * GROUP * HEAD_DIM
    ws = torch.empty(res + results + groups * splits * GROUP * (2 + HEAD_DIM), device=q.device, dtype=torch.float32)
    torch.cat((seq_lens.to(torch.int32), zeros, q.contiguous().view(-1).view(torch.int32)),
              out=ws[:res].view(torch.int32))
    launch(ws, k_cache.contiguous().view(-1).view(torch.int64), v_cache.contiguous().view(-1).view(torch.int64), batch)
    return ws[res:res + results].view(batch, query_heads, dim).to(torch.float16)
