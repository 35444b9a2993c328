"""numba-cuda solution for 36_gated_delta_decode_step: one block per (sequence, value head), one thread per value
column. The block L2-normalises its key head's q and k into shared memory, every thread computes the head's decay
and beta, then walks its column of the state once to recall k^T S, and once more to write the updated column and
read out q^T S. bfloat16 tensors are cast with torch (numba reads no bfloat16)."""

import math

import torch
from numba import cuda, float32

KEY_DIM = 128
NORM_EPS = 1e-6


@cuda.jit(device=True)
def _softplus(x):
    return x if x > float32(20.0) else math.log1p(math.exp(x))  # torch's threshold of 20


@cuda.jit(device=True)
def _normalised(source, b, head, target, partial, tid, scale):
    value = source[b, head, tid]
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
def _decode_step(q, k, v, a, b_gate, a_log, dt_bias, state, out, new_state):
    value_heads = v.shape[1]
    b = cuda.blockIdx.x // value_heads
    head = cuda.blockIdx.x % value_heads
    key_head = head // (value_heads // q.shape[1])
    j = cuda.threadIdx.x  # value column; KEY_DIM == VALUE_DIM threads also index the key dims
    partial = cuda.shared.array(KEY_DIM, float32)
    qn = cuda.shared.array(KEY_DIM, float32)
    kn = cuda.shared.array(KEY_DIM, float32)
    _normalised(q, b, key_head, qn, partial, j, float32(KEY_DIM ** -0.5))
    _normalised(k, b, key_head, kn, partial, j, float32(1.0))
    decay = math.exp(-math.exp(a_log[head]) * _softplus(a[b, head] + dt_bias[head]))
    beta = float32(1.0) / (float32(1.0) + math.exp(-b_gate[b, head]))
    recalled = float32(0.0)
    for i in range(KEY_DIM):
        recalled += state[b, head, i, j] * decay * kn[i]
    delta = (v[b, head, j] - recalled) * beta
    total = float32(0.0)
    for i in range(KEY_DIM):
        updated = state[b, head, i, j] * decay + kn[i] * delta
        new_state[b, head, i, j] = updated
        total += updated * qn[i]
    out[b, head, j] = total


def solve(q, k, v, a, b, a_log, dt_bias, state):
    batch, value_heads, value_dim = v.shape
    assert q.shape[2] == KEY_DIM == value_dim
    out = torch.empty(v.shape, device=v.device, dtype=torch.float32)
    new_state = torch.empty(state.shape, device=v.device, dtype=torch.float32)
    _decode_step[batch * value_heads, KEY_DIM](q.float(), k.float(), v.float(), a.float(), b.float(),
                                               a_log.float().contiguous(), dt_bias.float().contiguous(),
                                               state.float(), out, new_state)
    return out.to(v.dtype), new_state.to(state.dtype)
