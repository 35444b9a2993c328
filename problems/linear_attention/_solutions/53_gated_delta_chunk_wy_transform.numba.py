"""numba-cuda solution for 53_gated_delta_chunk_wy_transform: one block per (sequence, head, 64-token chunk). The
block builds the strictly lower A = beta_i (k_i . k_j) exp(g_i - g_j) (g the chunk's cumulative log decay) in
shared memory, then each thread owns one of the 128 dims and solves (I + A) u = beta v and (I + A) w =
beta exp(g) k by forward substitution, its columns of u and w held in registers. bfloat16 tensors are cast with
torch (numba reads no bfloat16)."""

import math

import torch
from numba import cuda, float32

CHUNK = 64
HEAD_DIM = 128


@cuda.jit
def _wy(k, v, beta, g, w_out, u_out):
    heads = k.shape[2]
    chunks = k.shape[1] // CHUNK
    c = cuda.blockIdx.x % chunks
    h = (cuda.blockIdx.x // chunks) % heads
    b = cuda.blockIdx.x // (chunks * heads)
    tid = cuda.threadIdx.x
    t0 = c * CHUNK
    cumulative = cuda.shared.array(CHUNK, float32)
    betas = cuda.shared.array(CHUNK, float32)
    a = cuda.shared.array((CHUNK, CHUNK), float32)
    if tid == 0:
        total = float32(0.0)
        for i in range(CHUNK):
            total += g[b, t0 + i, h]
            cumulative[i] = total
    if tid < CHUNK:
        betas[tid] = beta[b, t0 + tid, h]
    cuda.syncthreads()
    for index in range(tid, CHUNK * CHUNK, HEAD_DIM):
        i = index // CHUNK
        j = index % CHUNK
        value = float32(0.0)
        if j < i:
            dot = float32(0.0)
            for d in range(HEAD_DIM):
                dot += k[b, t0 + i, h, d] * k[b, t0 + j, h, d]
            value = betas[i] * dot * math.exp(cumulative[i] - cumulative[j])
        a[i, j] = value
    cuda.syncthreads()
    u = cuda.local.array(CHUNK, float32)
    w = cuda.local.array(CHUNK, float32)
    d = tid
    for i in range(CHUNK):
        u_i = betas[i] * v[b, t0 + i, h, d]
        w_i = betas[i] * math.exp(cumulative[i]) * k[b, t0 + i, h, d]
        for j in range(i):
            u_i -= a[i, j] * u[j]
            w_i -= a[i, j] * w[j]
        u[i] = u_i
        w[i] = w_i
        u_out[b, t0 + i, h, d] = u_i
        w_out[b, t0 + i, h, d] = w_i


def solve(k, v, beta, g):
    batch, seq_len, heads, dim = k.shape
    assert dim == HEAD_DIM and seq_len % CHUNK == 0
    w = torch.empty(k.shape, device=k.device, dtype=torch.float32)
    u = torch.empty(v.shape, device=k.device, dtype=torch.float32)
    _wy[batch * heads * (seq_len // CHUNK), HEAD_DIM](k.float(), v.float(), beta.float(), g.contiguous(), w, u)
    return w.to(k.dtype), u.to(v.dtype)
