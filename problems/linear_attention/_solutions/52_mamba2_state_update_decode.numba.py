"""numba-cuda solution for 52_mamba2_state_update_decode: one block per (sequence, head), one warp per state row
(lanes over the 128 state dims, four each): each lane updates its part of the row with the head's decay and
step * x * B, the warp reduces the readout with C through shuffles and adds D * x. bfloat16 tensors are cast with
torch (numba reads no bfloat16)."""

import math

import torch
from numba import cuda, float32

STATE_DIM = 128
PER_LANE = STATE_DIM // 32
WARPS = 8


@cuda.jit
def _state_update(x, dt, b_in, c_in, state, a, d, dt_bias, y, new_state):
    heads = x.shape[1]
    b = cuda.blockIdx.x // heads
    h = cuda.blockIdx.x % heads
    lane = cuda.threadIdx.x % 32
    warp = cuda.threadIdx.x // 32
    raw = dt[b, h] + dt_bias[h]
    step = raw if raw > float32(20.0) else math.log1p(math.exp(raw))  # softplus, torch's threshold of 20
    decay = math.exp(step * a[h])
    for p in range(warp, x.shape[2], WARPS):
        xp = x[b, h, p]
        total = float32(0.0)
        for i in range(PER_LANE):
            n = lane + 32 * i
            updated = state[b, h, p, n] * decay + step * xp * b_in[b, n]
            new_state[b, h, p, n] = updated
            total += updated * c_in[b, n]
        offset = 16
        while offset > 0:
            total += cuda.shfl_xor_sync(0xFFFFFFFF, total, offset)
            offset //= 2
        if lane == 0:
            y[b, h, p] = total + d[h] * xp


def solve(x, dt, b, c, state, a, d, dt_bias):
    batch, heads, _ = x.shape
    assert state.shape[3] == STATE_DIM
    y = torch.empty(x.shape, device=x.device, dtype=torch.float32)
    new_state = torch.empty(state.shape, device=x.device, dtype=torch.float32)
    _state_update[batch * heads, WARPS * 32](x.float(), dt.float(), b.float(), c.float(), state.contiguous(),
                                             a.contiguous(), d.contiguous(), dt_bias.float().contiguous(), y,
                                             new_state)
    return y.to(x.dtype), new_state
