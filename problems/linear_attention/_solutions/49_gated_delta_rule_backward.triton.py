"""Triton solution: one program per (sequence, head, 64 value columns) runs the recurrence forward, writing every
state S_t of its [128, 64] slice to a float32 scratch buffer, then walks back through time with G = dL/dS_t in
registers, reading S_t and S_{t-1} back. dv is complete per slice; dq, dk, dg and dbeta are sums over the value
dims, so each slice writes its share to its own float32 partial buffer and a last kernel adds the two shares (in a
fixed order) and casts them to the output dtypes.
"""

import torch
import triton
import triton.language as tl

BLOCK_V = 64


@triton.jit
def _gdn_backward(q_ptr, k_ptr, v_ptr, g_ptr, beta_ptr, do_ptr, states_ptr, dq_ptr, dk_ptr, dv_ptr, dg_ptr,
                  dbeta_ptr, seq_len, scale, key_part, gate_part,
                  HEADS: tl.constexpr, KEY_DIM: tl.constexpr, VALUE_DIM: tl.constexpr, BLOCK_V: tl.constexpr):
    bh = tl.program_id(0)
    vb = tl.program_id(1)
    b = bh // HEADS
    h = bh % HEADS
    kd = tl.arange(0, KEY_DIM)
    vd = vb * BLOCK_V + tl.arange(0, BLOCK_V)
    slice_offs = kd[:, None] * BLOCK_V + tl.arange(0, BLOCK_V)[None, :]
    dq_ptr += vb * key_part  # this slice's partial buffers
    dk_ptr += vb * key_part
    dg_ptr += vb * gate_part
    dbeta_ptr += vb * gate_part
    scratch = states_ptr + (bh * tl.num_programs(1) + vb).to(tl.int64) * seq_len * (KEY_DIM * BLOCK_V)
    state = tl.zeros([KEY_DIM, BLOCK_V], tl.float32)
    for t in range(seq_len):
        row = (b * seq_len + t) * HEADS + h
        k = tl.load(k_ptr + row.to(tl.int64) * KEY_DIM + kd).to(tl.float32)
        v = tl.load(v_ptr + row.to(tl.int64) * VALUE_DIM + vd).to(tl.float32)
        a = tl.exp(tl.load(g_ptr + row))
        beta = tl.load(beta_ptr + row).to(tl.float32)
        recalled = tl.sum(k[:, None] * state, 0)
        state = a * state + k[:, None] * (beta * (v - a * recalled))[None, :]
        tl.store(scratch + t * (KEY_DIM * BLOCK_V) + slice_offs, state)
    tl.debug_barrier()  # the backward pass reads what other threads of this program stored
    grad = tl.zeros([KEY_DIM, BLOCK_V], tl.float32)
    for step in range(seq_len):
        t = seq_len - 1 - step
        row = (b * seq_len + t) * HEADS + h
        q = tl.load(q_ptr + row.to(tl.int64) * KEY_DIM + kd).to(tl.float32)
        k = tl.load(k_ptr + row.to(tl.int64) * KEY_DIM + kd).to(tl.float32)
        v = tl.load(v_ptr + row.to(tl.int64) * VALUE_DIM + vd).to(tl.float32)
        do = tl.load(do_ptr + row.to(tl.int64) * VALUE_DIM + vd).to(tl.float32)
        a = tl.exp(tl.load(g_ptr + row))
        beta = tl.load(beta_ptr + row).to(tl.float32)
        current = tl.load(scratch + t * (KEY_DIM * BLOCK_V) + slice_offs)
        prev = tl.load(scratch + (t - 1) * (KEY_DIM * BLOCK_V) + slice_offs, mask=(t > 0), other=0.0)
        grad += scale * q[:, None] * do[None, :]
        tl.store(dq_ptr + row.to(tl.int64) * KEY_DIM + kd, scale * tl.sum(current * do[None, :], 1))
        k_prev = tl.sum(k[:, None] * prev, 0)
        u = v - a * k_prev
        k_grad = tl.sum(k[:, None] * grad, 0)
        r = beta * k_grad
        tl.store(dv_ptr + row.to(tl.int64) * VALUE_DIM + vd, r.to(dv_ptr.dtype.element_ty))
        dk = beta * tl.sum(grad * u[None, :], 1) - a * tl.sum(prev * r[None, :], 1)
        tl.store(dk_ptr + row.to(tl.int64) * KEY_DIM + kd, dk)
        tl.store(dbeta_ptr + row, tl.sum(k_grad * u, 0))
        # dg = a (<G, S_{t-1}> - r . (k S_{t-1})) = a <G - k^T r, S_{t-1}>: one sum over the matrix that also
        # carries G back, instead of the difference of two large sums (that difference cancels in float32).
        kept = grad - k[:, None] * r[None, :]
        tl.store(dg_ptr + row, a * tl.sum(tl.sum(kept * prev, 1), 0))
        grad = a * kept


@triton.jit
def _sum_parts(src_ptr, dst_ptr, n, PARTS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < n
    total = tl.load(src_ptr + offs, mask=ok, other=0.0)
    for part in tl.static_range(1, PARTS):
        total += tl.load(src_ptr + part * n + offs, mask=ok, other=0.0)
    tl.store(dst_ptr + offs, total.to(dst_ptr.dtype.element_ty), mask=ok)


def _summed(parts, like):
    target = torch.empty_like(like)
    n = like.numel()
    _sum_parts[(triton.cdiv(n, 4096),)](parts, target, n, PARTS=parts.shape[0], BLOCK=4096, num_warps=4)
    return target


def solve(q, k, v, g, beta, dout):
    q, k, v, g, beta, dout = (t.contiguous() for t in (q, k, v, g, beta, dout))
    batch, seq_len, heads, key_dim = q.shape
    value_dim = v.shape[-1]
    blocks = value_dim // BLOCK_V
    states = torch.empty(batch * heads * blocks * seq_len * key_dim * BLOCK_V, device=q.device, dtype=torch.float32)
    dq = torch.empty(blocks, *q.shape, device=q.device, dtype=torch.float32)  # one partial per value slice
    dk = torch.empty(blocks, *k.shape, device=q.device, dtype=torch.float32)
    dg = torch.empty(blocks, *g.shape, device=q.device, dtype=torch.float32)
    dbeta = torch.empty(blocks, *beta.shape, device=q.device, dtype=torch.float32)
    dv = torch.empty_like(v)
    _gdn_backward[(batch * heads, blocks)](q, k, v, g, beta, dout, states, dq, dk, dv, dg, dbeta, seq_len,
                                           key_dim**-0.5, q.numel(), g.numel(), HEADS=heads, KEY_DIM=key_dim,
                                           VALUE_DIM=value_dim, BLOCK_V=BLOCK_V, num_warps=8)
    return _summed(dq, q), _summed(dk, k), dv, _summed(dg, g), _summed(dbeta, beta)
