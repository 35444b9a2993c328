"""numba-cuda solution for 49_gated_delta_rule_backward: one block of 256 threads per (sequence, head, 64 value
columns); a thread owns one column and 32 key rows of the state slice. The forward pass writes every state S_t of the
slice to a float32 scratch buffer; the backward pass keeps G = dL/dS_t in per-thread arrays and reads S_t and
S_{t-1} back. Sums over key rows go through shared memory (4 row groups), sums over value columns through a shared
[128, 64] tile that 128 threads add up row by row, and the two scalars per step through a tree reduction; dq, dk,
dg and dbeta are per-slice partials that a last kernel adds in slice order. float32 throughout: torch casts the bf16
inputs to float32 and the results back."""

import math

import torch
from numba import cuda, float32

KEY_DIM = 128
BLOCK_V = 64
THREADS = 256
ROW_GROUPS = THREADS // BLOCK_V  # 4
ROWS = KEY_DIM // ROW_GROUPS  # 32 key rows per thread
TILE_COLS = BLOCK_V + 1  # padded against bank conflicts; a shared array's shape must be a module constant


@cuda.jit
def _backward(q, k, v, g, beta, dout, states, dq_part, dk_part, dv, dg_part, dbeta_part):
    q_s = cuda.shared.array(KEY_DIM, float32)
    k_s = cuda.shared.array(KEY_DIM, float32)
    v_s = cuda.shared.array(BLOCK_V, float32)
    do_s = cuda.shared.array(BLOCK_V, float32)
    scalars = cuda.shared.array(2, float32)  # a_t, beta_t
    col_a = cuda.shared.array((ROW_GROUPS, BLOCK_V), float32)  # partial sums over key rows
    col_b = cuda.shared.array((ROW_GROUPS, BLOCK_V), float32)
    tile = cuda.shared.array((KEY_DIM, TILE_COLS), float32)  # terms to sum over value columns
    red_a = cuda.shared.array(THREADS, float32)
    red_b = cuda.shared.array(THREADS, float32)
    tid = cuda.threadIdx.x
    c = tid % BLOCK_V
    rg = tid // BLOCK_V
    heads = q.shape[2]
    seq_len = q.shape[1]
    bh = cuda.blockIdx.x
    vb = cuda.blockIdx.y
    b = bh // heads
    h = bh % heads
    col = vb * BLOCK_V + c
    part = bh * cuda.gridDim.y + vb  # this slice's scratch
    scale = float32(KEY_DIM**-0.5)

    s = cuda.local.array(ROWS, float32)
    for i in range(ROWS):
        s[i] = float32(0.0)
    for t in range(seq_len):
        cuda.syncthreads()  # the previous step is done with the shared vectors
        if tid < KEY_DIM:
            k_s[tid] = k[b, t, h, tid]
        elif tid < KEY_DIM + BLOCK_V:
            v_s[tid - KEY_DIM] = v[b, t, h, vb * BLOCK_V + tid - KEY_DIM]
        elif tid == KEY_DIM + BLOCK_V:
            scalars[0] = math.exp(g[b, t, h])
            scalars[1] = beta[b, t, h]
        cuda.syncthreads()
        partial = float32(0.0)
        for i in range(ROWS):
            partial += k_s[rg * ROWS + i] * s[i]
        col_a[rg, c] = partial
        cuda.syncthreads()
        recalled = col_a[0, c] + col_a[1, c] + col_a[2, c] + col_a[3, c]
        a = scalars[0]
        delta = scalars[1] * (v_s[c] - a * recalled)
        for i in range(ROWS):
            s[i] = a * s[i] + k_s[rg * ROWS + i] * delta
            states[part, t, rg * ROWS + i, c] = s[i]
    cuda.syncthreads()  # every stored state is visible to the block

    grad = cuda.local.array(ROWS, float32)
    prev = cuda.local.array(ROWS, float32)
    for i in range(ROWS):
        grad[i] = float32(0.0)
    for step in range(seq_len):
        t = seq_len - 1 - step
        cuda.syncthreads()
        if tid < KEY_DIM:
            q_s[tid] = q[b, t, h, tid]
            k_s[tid] = k[b, t, h, tid]
        elif tid < KEY_DIM + BLOCK_V:
            j = tid - KEY_DIM
            v_s[j] = v[b, t, h, vb * BLOCK_V + j]
            do_s[j] = dout[b, t, h, vb * BLOCK_V + j]
        elif tid == KEY_DIM + BLOCK_V:
            scalars[0] = math.exp(g[b, t, h])
            scalars[1] = beta[b, t, h]
        cuda.syncthreads()
        a = scalars[0]
        bt = scalars[1]
        dov = do_s[c]
        k_prev = float32(0.0)
        k_grad = float32(0.0)
        for i in range(ROWS):
            r = rg * ROWS + i
            prev[i] = states[part, t - 1, r, c] if t > 0 else float32(0.0)
            grad[i] += scale * q_s[r] * dov
            k_prev += k_s[r] * prev[i]
            k_grad += k_s[r] * grad[i]
            tile[r, c] = states[part, t, r, c] * dov  # dq terms
        col_a[rg, c] = k_prev
        col_b[rg, c] = k_grad
        cuda.syncthreads()
        if tid < KEY_DIM:
            total = float32(0.0)
            for cc in range(BLOCK_V):
                total += tile[tid, cc]
            dq_part[vb, b, t, h, tid] = scale * total
        k_prev = col_a[0, c] + col_a[1, c] + col_a[2, c] + col_a[3, c]
        k_grad = col_b[0, c] + col_b[1, c] + col_b[2, c] + col_b[3, c]
        u = v_s[c] - a * k_prev
        r_c = bt * k_grad
        if rg == 0:
            dv[b, t, h, col] = r_c
        cuda.syncthreads()  # the dq sums are read: the tile takes the dk terms
        # dg = a (<G, S_{t-1}> - r . (k S_{t-1})) = a <G - k^T r, S_{t-1}>: one sum over the matrix that also carries
        # G back, instead of the difference of two large sums (that difference cancels in float32).
        gate = float32(0.0)
        for i in range(ROWS):
            r = rg * ROWS + i
            tile[r, c] = bt * grad[i] * u - a * prev[i] * r_c
            kept = grad[i] - k_s[r] * r_c
            gate += kept * prev[i]
            grad[i] = a * kept  # dL/dS_{t-1}, before its q do term
        red_a[tid] = gate
        red_b[tid] = k_grad * u if rg == 0 else float32(0.0)
        cuda.syncthreads()
        if tid < KEY_DIM:
            total = float32(0.0)
            for cc in range(BLOCK_V):
                total += tile[tid, cc]
            dk_part[vb, b, t, h, tid] = total
        stride = THREADS // 2
        while stride > 0:
            if tid < stride:
                red_a[tid] += red_a[tid + stride]
                red_b[tid] += red_b[tid + stride]
            cuda.syncthreads()
            stride //= 2
        if tid == 0:
            dg_part[vb, b, t, h] = a * red_a[0]
            dbeta_part[vb, b, t, h] = red_b[0]


@cuda.jit
def _sum_parts(parts, out):
    for i in range(cuda.grid(1), out.shape[0], cuda.gridsize(1)):
        total = parts[0, i]
        for p in range(1, parts.shape[0]):
            total += parts[p, i]
        out[i] = total


def _summed(parts, like):
    out = torch.empty(like.numel(), device=like.device, dtype=torch.float32)
    _sum_parts[132 * 8, 256](parts.view(parts.shape[0], -1), out)
    return out.view(like.shape).to(like.dtype)


def solve(q, k, v, g, beta, dout):
    batch, seq_len, heads, key_dim = q.shape
    value_dim = v.shape[-1]
    assert key_dim == KEY_DIM and value_dim % BLOCK_V == 0
    blocks = value_dim // BLOCK_V
    device = q.device
    wide = [t.float().contiguous() for t in (q, k, v, g, beta, dout)]
    states = torch.empty(batch * heads * blocks, seq_len, key_dim, BLOCK_V, device=device, dtype=torch.float32)
    dq = torch.empty(blocks, *q.shape, device=device, dtype=torch.float32)  # one partial per value slice
    dk = torch.empty(blocks, *k.shape, device=device, dtype=torch.float32)
    dg = torch.empty(blocks, *g.shape, device=device, dtype=torch.float32)
    dbeta = torch.empty(blocks, *beta.shape, device=device, dtype=torch.float32)
    dv = torch.empty(v.shape, device=device, dtype=torch.float32)
    _backward[(batch * heads, blocks), THREADS](*wide, states, dq, dk, dv, dg, dbeta)
    return _summed(dq, q), _summed(dk, k), dv.to(v.dtype), _summed(dg, g), _summed(dbeta, beta)
