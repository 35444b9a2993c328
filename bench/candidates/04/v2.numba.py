"""numba-cuda solution for 04_mixtral_top2_router: v1's kernel with two tensor arguments instead of three.

The call's time is mostly numba's host work (the shipped solution: 0.34 ms a call, 0.11 ms of it on the device), and
numba converts every tensor argument on the host. Here the gate weights travel inside the output's buffer: solve
takes one float32 workspace, copies the [8, hidden] fp16 gate rows into its tail with torch (a 64 KB copy, queued
before the launch) and returns the head, [tokens, 8], as the dense output. The kernel reads the gate rows as float32
words (two fp16 each, bits moved with libdevice.float_as_int) and the hidden rows as a 2-D int64 view (its shape
gives the token count and the row length, so no scalar argument). Everything else is v1: one warp per 4 tokens,
64-bit hidden loads one step ahead, fp16 widened by integer operations (value * 2^-112, 2^127 into the gate weights
and 2^97 out of the sums), the 62-shuffle reduce-scatter, the top two by 8 shuffles, one coalesced 128-byte store a
warp.
"""

import math

import torch
from numba import cuda, float32, int32, int64, uint64
from numba.cuda import libdevice

EXPERTS = 8
TOKENS = 4  # tokens per warp
WARPS = 4  # warps per block
THREADS = 128
SUMS = 32  # TOKENS * EXPERTS float32 sums a lane, [token][expert]
GATE = 32  # EXPERTS * 4 widened gate values a lane and step, [expert][4]
FULL_MASK = 0xFFFFFFFF
GATE_SCALE = 2.0 ** 127  # into the widened gate weights: w * 2^-112 * 2^127 = w * 2^15
LOGIT_SCALE = 2.0 ** 97  # out of the sums: h * 2^-112 * w * 2^15 = h * w * 2^-97
HALF_BITS = 0x8FFFE000  # a top-aligned fp16 shifted right 3 (arithmetically): sign, then magnitude at bits 13-27


@cuda.jit(device=True)
def _high(x):
    """The high fp16 of the int32 x as a float32 of value * 2^-112: an arithmetic shift right by 3 keeps the sign at
    bit 31, copies it into bits 28-30 (masked off) and puts the magnitude at bits 13-27."""
    return libdevice.int_as_float(int32((x >> 3) & HALF_BITS))


@cuda.jit(device=True)
def _low(x):
    """The low fp16 of the int32 x as a float32 of value * 2^-112 (moved to the top half first)."""
    return _high(int32(x << 16))


@cuda.jit
def _router(hidden_words, ws):
    """hidden_words: [tokens, words] int64 (fp16 rows, 4 a word); ws: float32, [tokens * EXPERTS] the dense output,
    then the gate rows' bits, [EXPERTS, 2 * words] words of two fp16. Warp w handles tokens 4 w .. 4 w + 3."""
    lane = cuda.threadIdx.x & 31
    warp = cuda.blockIdx.x * WARPS + (cuda.threadIdx.x >> 5)
    tokens = hidden_words.shape[0]
    words = hidden_words.shape[1]
    gate_at = tokens * EXPERTS + 2 * lane  # this lane's first gate word: row 0, column `lane`
    token0 = warp * TOKENS
    if token0 >= tokens:  # the whole warp leaves together
        return
    rows = min(TOKENS, tokens - token0)
    acc = cuda.local.array(SUMS, float32)
    for j in range(SUMS):
        acc[j] = float32(0.0)
    gate = cuda.local.array(GATE, float32)
    cur = cuda.local.array(TOKENS, int64)
    nxt = cuda.local.array(TOKENS, int64)
    scale = float32(GATE_SCALE)
    for t in range(TOKENS):
        cur[t] = hidden_words[uint64(token0 + t), uint64(lane)] if t < rows else int64(0)
    steps = words // 32
    for step in range(steps):
        col = step * 32 + lane
        if step + 1 < steps:
            for t in range(TOKENS):
                nxt[t] = hidden_words[uint64(token0 + t), uint64(col + 32)] if t < rows else int64(0)
        for e in range(EXPERTS):
            at = gate_at + 2 * (e * words + step * 32)
            lo = libdevice.float_as_int(ws[uint64(at)])
            hi = libdevice.float_as_int(ws[uint64(at + 1)])
            gate[4 * e] = _low(lo) * scale
            gate[4 * e + 1] = _high(lo) * scale
            gate[4 * e + 2] = _low(hi) * scale
            gate[4 * e + 3] = _high(hi) * scale
        for t in range(TOKENS):
            lo = int32(cur[t])
            hi = int32(cur[t] >> 32)
            x0 = _low(lo)
            x1 = _high(lo)
            x2 = _low(hi)
            x3 = _high(hi)
            for e in range(EXPERTS):  # one chain: 4 FMAs
                acc[8 * t + e] = acc[8 * t + e] + x0 * gate[4 * e] + x1 * gate[4 * e + 1] + \
                    x2 * gate[4 * e + 2] + x3 * gate[4 * e + 3]
        for t in range(TOKENS):
            cur[t] = nxt[t]

    # Reduce-scatter over the warp: at xor 16, 8, 4, 2, 1 a lane keeps the half of its sums picked by that lane bit,
    # each added to its partner's copy; lane l ends with sum l = token l >> 3, expert l & 7. Both halves are summed
    # and the lane then picks one: a pick between two array elements would become a dynamic index into acc (a
    # compare-and-move chain over all 32 registers), a pick between two sums stays one select.
    up = (lane & 16) != 0
    for j in range(16):
        low = acc[j] + cuda.shfl_xor_sync(FULL_MASK, acc[j], 16)
        high = acc[j + 16] + cuda.shfl_xor_sync(FULL_MASK, acc[j + 16], 16)
        acc[j] = high if up else low
    up = (lane & 8) != 0
    for j in range(8):
        low = acc[j] + cuda.shfl_xor_sync(FULL_MASK, acc[j], 8)
        high = acc[j + 8] + cuda.shfl_xor_sync(FULL_MASK, acc[j + 8], 8)
        acc[j] = high if up else low
    up = (lane & 4) != 0
    for j in range(4):
        low = acc[j] + cuda.shfl_xor_sync(FULL_MASK, acc[j], 4)
        high = acc[j + 4] + cuda.shfl_xor_sync(FULL_MASK, acc[j + 4], 4)
        acc[j] = high if up else low
    up = (lane & 2) != 0
    low = acc[0] + cuda.shfl_xor_sync(FULL_MASK, acc[0], 2)
    high = acc[2] + cuda.shfl_xor_sync(FULL_MASK, acc[2], 2)
    x0 = high if up else low
    low = acc[1] + cuda.shfl_xor_sync(FULL_MASK, acc[1], 2)
    high = acc[3] + cuda.shfl_xor_sync(FULL_MASK, acc[3], 2)
    x1 = high if up else low
    up = (lane & 1) != 0
    low = x0 + cuda.shfl_xor_sync(FULL_MASK, x0, 1)
    high = x1 + cuda.shfl_xor_sync(FULL_MASK, x1, 1)
    logit = (high if up else low) * float32(LOGIT_SCALE)

    # Top two of the token's 8 logits (lanes 8 t .. 8 t + 7): the first index of the largest, then the first index
    # of the largest of the others (as the shipped solution); renormalised softmax weights.
    base = lane & 24
    best = cuda.shfl_sync(FULL_MASK, logit, base)
    first = 0
    runner = float32(-math.inf)
    second = -1
    for e in range(1, EXPERTS):
        value = cuda.shfl_sync(FULL_MASK, logit, base + e)
        if value > best:  # the old best is now the best of the others seen (earlier index)
            runner = best
            second = first
            best = value
            first = e
        elif value > runner:
            runner = value
            second = e
    d = math.exp(runner - best)
    w_first = float32(1.0) / (float32(1.0) + d)
    mine = lane & 7
    out = w_first if mine == first else (d * w_first if mine == second else float32(0.0))
    if (lane >> 3) < rows:
        ws[uint64(token0 * EXPERTS + lane)] = out


_launches = {}


def solve(hidden, gate_weight):
    tokens, size = hidden.shape
    assert gate_weight.shape[0] == EXPERTS and size % 128 == 0
    assert hidden.dtype == torch.float16 and gate_weight.dtype == torch.float16
    blocks = (tokens + TOKENS * WARPS - 1) // (TOKENS * WARPS)
    launch = _launches.get(blocks)
    if launch is None:
        launch = _launches[blocks] = _router[blocks, THREADS]
    ws = torch.empty(tokens * EXPERTS + EXPERTS * size // 2, device=hidden.device, dtype=torch.float32)
    ws[tokens * EXPERTS:].view(torch.float16).view(EXPERTS, size).copy_(gate_weight)
    launch(hidden.contiguous().view(torch.int64), ws)
    return ws[:tokens * EXPERTS].view(tokens, EXPERTS)
