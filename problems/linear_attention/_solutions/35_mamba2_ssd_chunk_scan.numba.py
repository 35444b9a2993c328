"""numba-cuda solution for 35_mamba2_ssd_chunk_scan: the chunked SSD computes the same sequence as the Mamba-2
recurrence state_t = exp(dt_t a) state_{t-1} + dt_t x_t b_t^T, y_t = state_t c_t + D x_t, so this runs the
recurrence: one block per (sequence, head), one thread per head dim keeping its 128-wide state row in registers;
each step the block stages b_t and c_t in shared memory. bfloat16 tensors are cast with torch (numba reads no
bfloat16)."""

import math

import torch
from numba import cuda, float32

HEAD_DIM = 64
D_STATE = 128


@cuda.jit
def _ssd(x, dt_raw, a, b_in, c_in, d, dt_bias, out):
    heads = x.shape[2]
    b = cuda.blockIdx.x // heads
    h = cuda.blockIdx.x % heads
    p = cuda.threadIdx.x
    bs = cuda.shared.array(D_STATE, float32)
    cs = cuda.shared.array(D_STATE, float32)
    state = cuda.local.array(D_STATE, float32)
    for n in range(D_STATE):
        state[n] = float32(0.0)
    rate = a[h]
    bias = dt_bias[h]
    skip = d[h]
    for t in range(x.shape[1]):
        for n in range(p, D_STATE, HEAD_DIM):
            bs[n] = b_in[b, t, n]
            cs[n] = c_in[b, t, n]
        cuda.syncthreads()
        raw = dt_raw[b, t, h] + bias
        dt = raw if raw > float32(20.0) else math.log1p(math.exp(raw))  # softplus, torch's threshold of 20
        decay = math.exp(dt * rate)
        xp = x[b, t, h, p]
        feed = dt * xp
        y = float32(0.0)
        for n in range(D_STATE):
            state[n] = state[n] * decay + feed * bs[n]
            y += state[n] * cs[n]
        out[b, t, h, p] = y + xp * skip
        cuda.syncthreads()  # the next step overwrites b and c


def solve(x, dt_raw, a, b, c, d, dt_bias):
    batch, seq_len, heads, head_dim = x.shape
    assert head_dim == HEAD_DIM and b.shape[2] == D_STATE
    out = torch.empty(x.shape, device=x.device, dtype=torch.float32)
    _ssd[batch * heads, HEAD_DIM](x.float(), dt_raw.float(), a.contiguous(), b.float(), c.float(), d.contiguous(),
                                  dt_bias.float().contiguous(), out)
    return out.to(x.dtype)
