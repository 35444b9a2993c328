"""Triton solution: one program per (head, 64-token chunk, sequence), heads fastest so that programs running together
read neighbouring 256-byte rows. A = strictly-lower(beta k k^T exp(g_i - g_j)) comes from one bf16 tensor-core
tl.dot (bf16 x bf16 products are exact in fp32, fp32 accumulation). Since A^64 = 0,
(I + A)^-1 = (I - A)(I + A^2)(I + A^4)(I + A^8)(I + A^16)(I + A^32): ten 64 x 64 products, each done as three bf16
tensor-core dots on operands split into bf16 high + low parts (hi*hi + hi*lo + lo*hi, ~16 significant bits, at
twice the tensor-core rate of tf32), each factor applied as t + t P through the dot's accumulator. Then
u = (T diag(beta)) v and w = (T diag(beta e^g)) k: the scaled T is split into a bf16 high and low part and each
output is two bf16 tensor-core dots against the bf16 inputs as loaded (the inputs are exact in bf16, so the
products keep ~16 significant bits of T and all of v and k).
"""

import torch
import triton
import triton.language as tl

CHUNK = 64


@triton.jit
def _dot3(a, b, acc):
    """acc + a b for fp32 tiles, as three bf16 tensor-core dots on high + low splits (the lo * lo term dropped)."""
    a_hi = a.to(tl.bfloat16)
    a_lo = (a - a_hi.to(tl.float32)).to(tl.bfloat16)
    b_hi = b.to(tl.bfloat16)
    b_lo = (b - b_hi.to(tl.float32)).to(tl.bfloat16)
    acc = tl.dot(a_lo, b_hi, acc=acc)
    acc = tl.dot(a_hi, b_lo, acc=acc)
    return tl.dot(a_hi, b_hi, acc=acc)


@triton.autotune(configs=[triton.Config({}, num_warps=4, num_stages=1), triton.Config({}, num_warps=8, num_stages=1)],
                 key=["seq_len"])
@triton.jit
def _wy_transform(k_ptr, v_ptr, beta_ptr, g_ptr, w_ptr, u_ptr, seq_len,
                  HEADS: tl.constexpr, HEAD_DIM: tl.constexpr, CHUNK: tl.constexpr):
    h = tl.program_id(0)
    chunk = tl.program_id(1)
    b = tl.program_id(2)
    i = tl.arange(0, CHUNK)
    dims = tl.arange(0, HEAD_DIM)
    rows = (b * seq_len + chunk * CHUNK + i).to(tl.int64) * HEADS + h  # (token, head) rows of the chunk
    offs = rows[:, None] * HEAD_DIM + dims[None, :]
    k = tl.load(k_ptr + offs)  # bf16, kept as is for the tensor-core dots
    beta = tl.load(beta_ptr + rows).to(tl.float32)
    g = tl.cumsum(tl.load(g_ptr + rows), 0)  # chunk-local cumulative log decay
    lower = i[:, None] > i[None, :]
    kk = tl.dot(k, tl.trans(k))  # bf16 in, fp32 accumulate
    decay = tl.exp(tl.where(lower, g[:, None] - g[None, :], 0.0))  # <= 1 below the diagonal
    a = tl.where(lower, beta[:, None] * kk * decay, 0.0)
    eye = tl.where(i[:, None] == i[None, :], 1.0, 0.0)
    t = eye - a
    zero = tl.zeros((CHUNK, CHUNK), dtype=tl.float32)
    p = _dot3(a, a, zero)  # A^2
    t = _dot3(t, p, t)  # (I - A)(I + A^2)
    for _ in tl.static_range(4):  # times I + A^4, I + A^8, I + A^16, I + A^32
        p = _dot3(p, p, zero)
        t = _dot3(t, p, t)
    # w = T diag(beta e^g) k, with the scaled T split into bf16 high + low parts
    tw = t * (beta * tl.exp(g))[None, :]
    tw_hi = tw.to(tl.bfloat16)
    tw_lo = (tw - tw_hi.to(tl.float32)).to(tl.bfloat16)
    w = tl.dot(tw_hi, k)
    w = tl.dot(tw_lo, k, acc=w)
    tl.store(w_ptr + offs, w.to(w_ptr.dtype.element_ty))
    # u = T diag(beta) v
    v = tl.load(v_ptr + offs)
    tu = t * beta[None, :]
    tu_hi = tu.to(tl.bfloat16)
    tu_lo = (tu - tu_hi.to(tl.float32)).to(tl.bfloat16)
    u = tl.dot(tu_hi, v)
    u = tl.dot(tu_lo, v, acc=u)
    tl.store(u_ptr + offs, u.to(u_ptr.dtype.element_ty))


def solve(k, v, beta, g):
    k, v, beta, g = k.contiguous(), v.contiguous(), beta.contiguous(), g.contiguous()
    batch, seq_len, heads, dim = k.shape
    w = torch.empty_like(k)
    u = torch.empty_like(v)
    _wy_transform[(heads, seq_len // CHUNK, batch)](k, v, beta, g, w, u, seq_len, HEADS=heads, HEAD_DIM=dim,
                                                    CHUNK=CHUNK)
    return w, u
