"""numba-cuda solution for 51_rwkv7_decode_step: one block per (sequence, head), one warp per state row v (lanes over
the 64 key dims, two each): the warp reduces s . a with shuffles, writes the updated row and reduces its readout
with r. bfloat16 tensors are cast with torch (numba reads no bfloat16)."""

import math

import torch
from numba import cuda, float32

HEAD_SIZE = 64
WARPS = 8
DECAY_SCALE = 0.606531


@cuda.jit(device=True)
def _warp_sum(value):
    offset = 16
    while offset > 0:
        value += cuda.shfl_xor_sync(0xFFFFFFFF, value, offset)
        offset //= 2
    return value


@cuda.jit
def _decode_step(r, w_raw, k, v, a, b_vec, state, y, new_state):
    heads = r.shape[1]
    b = cuda.blockIdx.x // heads
    h = cuda.blockIdx.x % heads
    lane = cuda.threadIdx.x % 32
    warp = cuda.threadIdx.x // 32
    k0, k1 = lane, lane + 32
    decay0 = math.exp(-float32(DECAY_SCALE) / (float32(1.0) + math.exp(-w_raw[b, h, k0])))
    decay1 = math.exp(-float32(DECAY_SCALE) / (float32(1.0) + math.exp(-w_raw[b, h, k1])))
    for row in range(warp, HEAD_SIZE, WARPS):
        s0 = state[b, h, row, k0]
        s1 = state[b, h, row, k1]
        sa = _warp_sum(s0 * a[b, h, k0] + s1 * a[b, h, k1])
        n0 = s0 * decay0 + sa * b_vec[b, h, k0] + v[b, h, row] * k[b, h, k0]
        n1 = s1 * decay1 + sa * b_vec[b, h, k1] + v[b, h, row] * k[b, h, k1]
        new_state[b, h, row, k0] = n0
        new_state[b, h, row, k1] = n1
        readout = _warp_sum(n0 * r[b, h, k0] + n1 * r[b, h, k1])
        if lane == 0:
            y[b, h, row] = readout


def solve(r, w_raw, k, v, a, b, state):
    batch, heads, size = r.shape
    assert size == HEAD_SIZE
    y = torch.empty(r.shape, device=r.device, dtype=torch.float32)
    new_state = torch.empty(state.shape, device=r.device, dtype=torch.float32)
    _decode_step[batch * heads, WARPS * 32](r.float(), w_raw.float(), k.float(), v.float(), a.float(), b.float(),
                                            state.contiguous(), y, new_state)
    return y.to(r.dtype), new_state
