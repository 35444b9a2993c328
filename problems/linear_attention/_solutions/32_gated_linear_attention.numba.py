"""numba-cuda solution for 32_gated_linear_attention: the recurrence itself, one block per (sequence, head) and one
thread per value column, which keeps its column of the 128 x 128 state in registers across all steps. Each step the
block stages the scaled query, the key and the per-channel forget gate exp(logsigmoid(gk) / 16) in shared memory;
every thread decays and updates its column and reads out its output. bfloat16 tensors are cast with torch (numba
reads no bfloat16)."""

import math

import torch
from numba import cuda, float32

KEY_DIM = 128
GATE_NORMALIZER = 16.0


@cuda.jit
def _recurrence(q, k, v, gk, out):
    heads = q.shape[2]
    b = cuda.blockIdx.x // heads
    h = cuda.blockIdx.x % heads
    j = cuda.threadIdx.x  # value column; also the key channel this thread stages
    qs = cuda.shared.array(KEY_DIM, float32)
    ks = cuda.shared.array(KEY_DIM, float32)
    alphas = cuda.shared.array(KEY_DIM, float32)
    state = cuda.local.array(KEY_DIM, float32)
    for i in range(KEY_DIM):
        state[i] = float32(0.0)
    scale = float32(KEY_DIM ** -0.5)
    for t in range(q.shape[1]):
        g = gk[b, t, h, j]
        log_sigmoid = min(g, float32(0.0)) - math.log1p(math.exp(-abs(g)))
        alphas[j] = math.exp(log_sigmoid / float32(GATE_NORMALIZER))
        qs[j] = q[b, t, h, j] * scale
        ks[j] = k[b, t, h, j]
        cuda.syncthreads()
        value = v[b, t, h, j]
        total = float32(0.0)
        for i in range(KEY_DIM):
            updated = state[i] * alphas[i] + ks[i] * value
            state[i] = updated
            total += qs[i] * updated
        out[b, t, h, j] = total
        cuda.syncthreads()  # the next step overwrites the staged vectors


def solve(q, k, v, gk):
    batch, seq_len, heads, key_dim = q.shape
    assert key_dim == KEY_DIM == v.shape[3]
    out = torch.empty(v.shape, device=v.device, dtype=torch.float32)
    _recurrence[batch * heads, KEY_DIM](q.float(), k.float(), v.float(), gk.float(), out)
    return out.to(v.dtype)
