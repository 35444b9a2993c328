"""numba-cuda solution for 53_gated_delta_chunk_wy_transform: one block of 256 threads per (sequence, head, 64-token
chunk), in three steps that keep the CUDA cores busy (float32: numba has no tensor-core access). The chunk's keys are
staged in shared memory and the 64 x 64 Gram matrix k k^T is a register-tiled product (each thread 4 x 4 entries), from
which A = strictly-lower(beta_i (k_i . k_j) exp(g_i - g_j)) is written to shared memory; four threads per column then
invert I + A by substitution down the columns (T = (I + A)^-1); and u = T diag(beta) v and
w = T diag(beta e^g) k are register-tiled products of T (shared) with the chunk's rows (read once per 8 output rows,
coalesced). The shipped solution built A with one uncoalesced 128-long dot per thread and entry and substituted with
its 64 unknowns in local memory. bfloat16 tensors are cast with torch (numba reads no bfloat16)."""

import math

import torch
from numba import cuda, float32

CHUNK = 64
HEAD_DIM = 128
THREADS = 256
KEY_STRIDE = HEAD_DIM + 1  # padded rows of the staged keys: a column read hits 32 banks
MATRIX_STRIDE = CHUNK + 1
STORE = 2 * CHUNK * MATRIX_STRIDE  # floats of shared memory: A and T, more than the padded keys need
GRAM = 4  # 16 x 16 threads, 4 x 4 Gram entries each
ROWS = 8  # output rows per thread in the products: 8 row groups x 32 columns
COLUMNS = 4


@cuda.jit
def _wy(k, v, beta, g, w_out, u_out):
    heads = k.shape[2]
    chunks = k.shape[1] // CHUNK
    h = cuda.blockIdx.x % heads
    c = (cuda.blockIdx.x // heads) % chunks
    b = cuda.blockIdx.x // (heads * chunks)
    tid = cuda.threadIdx.x
    t0 = c * CHUNK
    # keys first ([64][129]); then A at 0 and T at 64 * 65, both [64][65]
    store = cuda.shared.array(STORE, float32)
    cumulative = cuda.shared.array(CHUNK, float32)
    betas = cuda.shared.array(CHUNK, float32)
    if tid < CHUNK:
        cumulative[tid] = g[b, t0 + tid, h]
        betas[tid] = beta[b, t0 + tid, h]
    for index in range(tid, CHUNK * HEAD_DIM, THREADS):
        i = index // HEAD_DIM
        d = index % HEAD_DIM
        store[i * KEY_STRIDE + d] = k[b, t0 + i, h, d]
    cuda.syncthreads()
    if tid == 0:  # the chunk-local cumulative log decay, in place
        for i in range(1, CHUNK):
            cumulative[i] += cumulative[i - 1]
    cuda.syncthreads()

    # Gram entries (ti + 16 p, tj + 16 q) of this thread
    ti = tid // 16
    tj = tid % 16
    gram = cuda.local.array((GRAM, GRAM), float32)
    x = cuda.local.array(GRAM, float32)
    y = cuda.local.array(GRAM, float32)
    for p in range(GRAM):
        for q in range(GRAM):
            gram[p, q] = float32(0.0)
    for d in range(HEAD_DIM):
        for p in range(GRAM):
            x[p] = store[(ti + 16 * p) * KEY_STRIDE + d]
            y[p] = store[(tj + 16 * p) * KEY_STRIDE + d]
        for p in range(GRAM):
            for q in range(GRAM):
                gram[p, q] += x[p] * y[q]
    cuda.syncthreads()  # the keys' space becomes A and T
    for p in range(GRAM):
        i = ti + 16 * p
        for q in range(GRAM):
            j = tj + 16 * q
            value = float32(0.0)
            if j < i:
                value = betas[i] * gram[p, q] * math.exp(cumulative[i] - cumulative[j])
            store[i * MATRIX_STRIDE + j] = value
    cuda.syncthreads()

    # T = (I + A)^-1, unit lower triangular, by substitution down each column: four neighbouring lanes share column
    # col, each summing every fourth term of T[i, col] = -sum_{col <= j < i} A[i, j] T[j, col], joined by shuffles.
    # All four write the same value, so each reads back only what it wrote itself.
    inverse = CHUNK * MATRIX_STRIDE
    col = tid // 4
    part = tid % 4
    for i in range(CHUNK):
        partial = float32(0.0)
        if i > col:
            for j in range(col + part, i, 4):
                partial += store[i * MATRIX_STRIDE + j] * store[inverse + j * MATRIX_STRIDE + col]
        partial += cuda.shfl_xor_sync(0xFFFFFFFF, partial, 1)
        partial += cuda.shfl_xor_sync(0xFFFFFFFF, partial, 2)
        value = float32(0.0)
        if i == col:
            value = float32(1.0)
        elif i > col:
            value = -partial
        store[inverse + i * MATRIX_STRIDE + col] = value
    cuda.syncthreads()

    # u = T diag(beta) v and w = T diag(beta e^g) k: rows ri + 8 r, columns dc + 32 s of this thread
    ri = tid // 32
    dc = tid % 32
    acc_u = cuda.local.array((ROWS, COLUMNS), float32)
    acc_w = cuda.local.array((ROWS, COLUMNS), float32)
    t_row = cuda.local.array(ROWS, float32)
    scaled_v = cuda.local.array(COLUMNS, float32)
    scaled_k = cuda.local.array(COLUMNS, float32)
    for r in range(ROWS):
        for s in range(COLUMNS):
            acc_u[r, s] = float32(0.0)
            acc_w[r, s] = float32(0.0)
    for j in range(CHUNK):
        beta_j = betas[j]
        decayed_j = beta_j * math.exp(cumulative[j])
        for s in range(COLUMNS):
            scaled_v[s] = beta_j * v[b, t0 + j, h, dc + 32 * s]
            scaled_k[s] = decayed_j * k[b, t0 + j, h, dc + 32 * s]
        for r in range(ROWS):
            t_row[r] = store[inverse + (ri + 8 * r) * MATRIX_STRIDE + j]
        for r in range(ROWS):
            for s in range(COLUMNS):
                acc_u[r, s] += t_row[r] * scaled_v[s]
                acc_w[r, s] += t_row[r] * scaled_k[s]
    for r in range(ROWS):
        for s in range(COLUMNS):
            u_out[b, t0 + ri + 8 * r, h, dc + 32 * s] = acc_u[r, s]
            w_out[b, t0 + ri + 8 * r, h, dc + 32 * s] = acc_w[r, s]


def solve(k, v, beta, g):
    batch, seq_len, heads, dim = k.shape
    assert dim == HEAD_DIM and seq_len % CHUNK == 0
    w = torch.empty(k.shape, device=k.device, dtype=torch.float32)
    u = torch.empty(v.shape, device=k.device, dtype=torch.float32)
    _wy[batch * heads * (seq_len // CHUNK), THREADS](k.float(), v.float(), beta.float(), g.contiguous(), w, u)
    return w.to(k.dtype), u.to(v.dtype)
