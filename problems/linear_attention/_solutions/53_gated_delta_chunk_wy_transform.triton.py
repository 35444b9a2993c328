"""Triton solution: one program per (sequence, head, 64-token chunk). A = strictly-lower(beta k k^T exp(g_i - g_j))
comes from one tl.dot; since A^64 = 0, (I + A)^-1 = (I - A)(I + A^2)(I + A^4)(I + A^8)(I + A^16)(I + A^32), ten
64 x 64 tl.dots in full fp32 ("ieee"); then u and w are two more tl.dots with the scaled value and key tiles.
"""

import torch
import triton
import triton.language as tl

CHUNK = 64


@triton.jit
def _wy_transform(k_ptr, v_ptr, beta_ptr, g_ptr, w_ptr, u_ptr, seq_len,
                  HEADS: tl.constexpr, HEAD_DIM: tl.constexpr, CHUNK: tl.constexpr):
    chunk = tl.program_id(0)
    bh = tl.program_id(1)
    b = bh // HEADS
    h = bh % HEADS
    tokens = chunk * CHUNK + tl.arange(0, CHUNK)
    dims = tl.arange(0, HEAD_DIM)
    rows = ((b * seq_len + tokens).to(tl.int64) * HEADS + h)  # (token, head) rows
    k = tl.load(k_ptr + rows[:, None] * HEAD_DIM + dims[None, :]).to(tl.float32)
    v = tl.load(v_ptr + rows[:, None] * HEAD_DIM + dims[None, :]).to(tl.float32)
    beta = tl.load(beta_ptr + rows).to(tl.float32)
    g = tl.cumsum(tl.load(g_ptr + rows), 0)
    i = tl.arange(0, CHUNK)
    kk = tl.dot(k, tl.trans(k), input_precision="ieee")
    lower = i[:, None] > i[None, :]
    a = tl.where(lower, beta[:, None] * kk * tl.exp(g[:, None] - g[None, :]), 0.0)
    eye = tl.where(i[:, None] == i[None, :], 1.0, 0.0)
    t = eye - a
    power = tl.dot(a, a, input_precision="ieee")  # A^2
    for _ in tl.static_range(5):  # multiply by I + A^2, I + A^4, ..., I + A^32
        t = tl.dot(t, eye + power, input_precision="ieee")
        power = tl.dot(power, power, input_precision="ieee")
    u = tl.dot(t, beta[:, None] * v, input_precision="ieee")
    w = tl.dot(t, (beta * tl.exp(g))[:, None] * k, input_precision="ieee")
    tl.store(u_ptr + rows[:, None] * HEAD_DIM + dims[None, :], u.to(u_ptr.dtype.element_ty))
    tl.store(w_ptr + rows[:, None] * HEAD_DIM + dims[None, :], w.to(w_ptr.dtype.element_ty))


def solve(k, v, beta, g):
    k, v, beta, g = k.contiguous(), v.contiguous(), beta.contiguous(), g.contiguous()
    batch, seq_len, heads, dim = k.shape
    w = torch.empty_like(k)
    u = torch.empty_like(v)
    _wy_transform[(seq_len // CHUNK, batch * heads)](k, v, beta, g, w, u, seq_len, HEADS=heads, HEAD_DIM=dim,
                                                     CHUNK=CHUNK, num_warps=8)
    return w, u
