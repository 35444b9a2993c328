"""Triton solution: FlashAttention-2-style backward with the softcap folded in, in three kernels.

1. delta = rowsum(do * o) per (sequence, query head, token), fp32.
2. dK/dV: one program per (sequence, KV head, 32 keys) walks both query heads of the group and every causal query
   tile: it recomputes the capped logits from q k^T (tanh via exp), p = exp(c - lse), accumulates dv += p^T do and
   dk += ds^T q with ds = p (do v^T - delta) (1 - (c / 50)^2); the sum over the group happens in registers.
3. dQ: one program per (sequence, query head, 32 queries) walks the causal key tiles and accumulates dq += ds k.
All tl.dots take bf16 tiles with fp32 accumulation; head dim 256 is held whole.
"""

import torch
import triton
import triton.language as tl

BLOCK_M = 32
BLOCK_N = 32
SOFTCAP = 50.0
SCALE = 256**-0.5


@triton.jit
def _tanh(x):
    return 1.0 - 2.0 / (tl.exp(2.0 * x) + 1.0)  # saturates cleanly to +-1


@triton.jit
def _delta(o_ptr, do_ptr, delta_ptr, seq_len, HEADS: tl.constexpr, HEAD_DIM: tl.constexpr, ROWS: tl.constexpr):
    row = tl.program_id(0) * ROWS + tl.arange(0, ROWS)  # (b, t, h) rows of the [B, T, H, D] layout
    dims = tl.arange(0, HEAD_DIM)
    offs = row.to(tl.int64)[:, None] * HEAD_DIM + dims[None, :]
    d = tl.sum(tl.load(o_ptr + offs).to(tl.float32) * tl.load(do_ptr + offs).to(tl.float32), 1)
    b = row // (seq_len * HEADS)
    t = (row // HEADS) % seq_len
    h = row % HEADS
    tl.store(delta_ptr + (b * HEADS + h) * seq_len + t, d)  # [B, H, T] like lse


@triton.jit
def _scores(q, k, lse, rows, cols, SCALE: tl.constexpr, SOFTCAP: tl.constexpr):
    """The capped logits and the probabilities of a [BLOCK_M, BLOCK_N] tile (0 above the diagonal)."""
    capped = SOFTCAP * _tanh(tl.dot(q, tl.trans(k)) * (SCALE / SOFTCAP))
    p = tl.exp(capped - lse[:, None])
    p = tl.where(cols[None, :] <= rows[:, None], p, 0.0)
    return capped, p


@triton.jit
def _dkdv(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dk_ptr, dv_ptr, seq_len,
          QUERY_HEADS: tl.constexpr, KV_HEADS: tl.constexpr, HEAD_DIM: tl.constexpr, SCALE: tl.constexpr,
          SOFTCAP: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_n = tl.program_id(0) * BLOCK_N
    bh = tl.program_id(1)
    b = bh // KV_HEADS
    kv_h = bh % KV_HEADS
    group = QUERY_HEADS // KV_HEADS
    cols = start_n + tl.arange(0, BLOCK_N)
    dims = tl.arange(0, HEAD_DIM)
    kv_offs = ((b * seq_len + cols).to(tl.int64) * KV_HEADS + kv_h)[:, None] * HEAD_DIM + dims[None, :]
    k = tl.load(k_ptr + kv_offs)
    v = tl.load(v_ptr + kv_offs)
    dk = tl.zeros([BLOCK_N, HEAD_DIM], tl.float32)
    dv = tl.zeros([BLOCK_N, HEAD_DIM], tl.float32)
    for g in range(group):
        h = kv_h * group + g
        for start_m in range(start_n // BLOCK_M * BLOCK_M, seq_len, BLOCK_M):
            rows = start_m + tl.arange(0, BLOCK_M)
            q_offs = ((b * seq_len + rows).to(tl.int64) * QUERY_HEADS + h)[:, None] * HEAD_DIM + dims[None, :]
            q = tl.load(q_ptr + q_offs)
            do = tl.load(do_ptr + q_offs)
            stats = (b * QUERY_HEADS + h) * seq_len + rows
            lse = tl.load(lse_ptr + stats)
            delta = tl.load(delta_ptr + stats)
            capped, p = _scores(q, k, lse, rows, cols, SCALE, SOFTCAP)
            dv += tl.dot(tl.trans(p.to(do.dtype)), do)
            dp = tl.dot(do, tl.trans(v))
            cap_ratio = capped / SOFTCAP
            ds = p * (dp - delta[:, None]) * (1.0 - cap_ratio * cap_ratio)
            dk += tl.dot(tl.trans(ds.to(q.dtype)), q)
    tl.store(dk_ptr + kv_offs, (dk * SCALE).to(dk_ptr.dtype.element_ty))
    tl.store(dv_ptr + kv_offs, dv.to(dv_ptr.dtype.element_ty))


@triton.jit
def _dq(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dq_ptr, seq_len,
        QUERY_HEADS: tl.constexpr, KV_HEADS: tl.constexpr, HEAD_DIM: tl.constexpr, SCALE: tl.constexpr,
        SOFTCAP: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0) * BLOCK_M
    bh = tl.program_id(1)
    b = bh // QUERY_HEADS
    h = bh % QUERY_HEADS
    kv_h = h // (QUERY_HEADS // KV_HEADS)
    rows = start_m + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    q_offs = ((b * seq_len + rows).to(tl.int64) * QUERY_HEADS + h)[:, None] * HEAD_DIM + dims[None, :]
    q = tl.load(q_ptr + q_offs)
    do = tl.load(do_ptr + q_offs)
    stats = (b * QUERY_HEADS + h) * seq_len + rows
    lse = tl.load(lse_ptr + stats)
    delta = tl.load(delta_ptr + stats)
    dq = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    for start_n in range(0, start_m + BLOCK_M, BLOCK_N):
        cols = start_n + tl.arange(0, BLOCK_N)
        kv_offs = ((b * seq_len + cols).to(tl.int64) * KV_HEADS + kv_h)[:, None] * HEAD_DIM + dims[None, :]
        k = tl.load(k_ptr + kv_offs)
        v = tl.load(v_ptr + kv_offs)
        capped, p = _scores(q, k, lse, rows, cols, SCALE, SOFTCAP)
        dp = tl.dot(do, tl.trans(v))
        cap_ratio = capped / SOFTCAP
        ds = p * (dp - delta[:, None]) * (1.0 - cap_ratio * cap_ratio)
        dq += tl.dot(ds.to(k.dtype), k)
    tl.store(dq_ptr + q_offs, (dq * SCALE).to(dq_ptr.dtype.element_ty))


def solve(q, k, v, out, dout, lse):
    q, k, v, out, dout, lse = (t.contiguous() for t in (q, k, v, out, dout, lse))
    batch, seq_len, query_heads, dim = q.shape
    kv_heads = k.shape[2]
    assert seq_len % BLOCK_M == 0 and seq_len % BLOCK_N == 0
    delta = torch.empty_like(lse)
    rows = batch * seq_len * query_heads
    _delta[(rows // 16,)](out, dout, delta, seq_len, HEADS=query_heads, HEAD_DIM=dim, ROWS=16, num_warps=4)
    dq = torch.empty_like(q)
    dk = torch.empty_like(k)
    dv = torch.empty_like(v)
    meta = dict(QUERY_HEADS=query_heads, KV_HEADS=kv_heads, HEAD_DIM=dim, SCALE=SCALE, SOFTCAP=SOFTCAP,
                BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=8, num_stages=1)
    _dkdv[(seq_len // BLOCK_N, batch * kv_heads)](q, k, v, dout, lse, delta, dk, dv, seq_len, **meta)
    _dq[(seq_len // BLOCK_M, batch * query_heads)](q, k, v, dout, lse, delta, dq, seq_len, **meta)
    return dq, dk, dv
