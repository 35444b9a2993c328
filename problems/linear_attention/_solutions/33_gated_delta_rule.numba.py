"""numba-cuda solution for 33_gated_delta_rule: the recurrence itself, one block per (sequence, value head) and one
thread per value column, which keeps its column of the 128 x 128 state in registers across all steps. Each step the
block L2-normalises its key head's q and k into shared memory (a shared-memory reduction each), every thread takes
the step's decay and beta, recalls k^T S for its column, applies the delta-rule update and reads out q^T S; the last
state is written at the end. bfloat16 tensors are cast with torch (numba reads no bfloat16)."""

import math

import torch
from numba import cuda, float32

KEY_DIM = 128
NORM_EPS = 1e-6


@cuda.jit(device=True)
def _stage_normalised(value, target, partial, tid, scale):
    partial[tid] = value * value
    cuda.syncthreads()
    stride = KEY_DIM // 2
    while stride > 0:
        if tid < stride:
            partial[tid] += partial[tid + stride]
        cuda.syncthreads()
        stride //= 2
    target[tid] = value / math.sqrt(partial[0] + float32(NORM_EPS)) * scale
    cuda.syncthreads()


@cuda.jit
def _recurrence(q, k, v, a, b_gate, a_log, dt_bias, out, final_state):
    value_heads = v.shape[2]
    b = cuda.blockIdx.x // value_heads
    h = cuda.blockIdx.x % value_heads
    key_head = h // (value_heads // q.shape[2])
    j = cuda.threadIdx.x  # value column; also the key channel this thread stages
    partial = cuda.shared.array(KEY_DIM, float32)
    qs = cuda.shared.array(KEY_DIM, float32)
    ks = cuda.shared.array(KEY_DIM, float32)
    state = cuda.local.array(KEY_DIM, float32)
    for i in range(KEY_DIM):
        state[i] = float32(0.0)
    a_scale = math.exp(a_log[h])
    for t in range(q.shape[1]):
        _stage_normalised(q[b, t, key_head, j], qs, partial, j, float32(KEY_DIM ** -0.5))
        _stage_normalised(k[b, t, key_head, j], ks, partial, j, float32(1.0))
        raw = a[b, t, h] + dt_bias[h]
        softplus = raw if raw > float32(20.0) else math.log1p(math.exp(raw))  # torch's threshold of 20
        decay = math.exp(-a_scale * softplus)
        beta = float32(1.0) / (float32(1.0) + math.exp(-b_gate[b, t, h]))
        recalled = float32(0.0)
        for i in range(KEY_DIM):
            state[i] = state[i] * decay
            recalled += state[i] * ks[i]
        delta = (v[b, t, h, j] - recalled) * beta
        total = float32(0.0)
        for i in range(KEY_DIM):
            state[i] = state[i] + ks[i] * delta
            total += state[i] * qs[i]
        out[b, t, h, j] = total
    for i in range(KEY_DIM):
        final_state[b, h, i, j] = state[i]


def solve(q, k, v, a, b, a_log, dt_bias):
    batch, seq_len, key_heads, key_dim = q.shape
    value_heads, value_dim = v.shape[2], v.shape[3]
    assert key_dim == KEY_DIM == value_dim
    out = torch.empty(v.shape, device=v.device, dtype=torch.float32)
    final_state = torch.empty(batch, value_heads, key_dim, value_dim, device=v.device, dtype=torch.float32)
    _recurrence[batch * value_heads, KEY_DIM](q.float(), k.float(), v.float(), a.float(), b.float(),
                                              a_log.float().contiguous(), dt_bias.float().contiguous(), out,
                                              final_state)
    return out.to(v.dtype), final_state.to(v.dtype)
