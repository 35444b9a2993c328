"""Mamba-2 SSD scan in one Triton kernel: each program owns one (sequence, head) with its [64, 128] state in registers
and walks 64-token chunks; inside a chunk C B^T masked by the segment decays times x, plus C against the carried
state, are tensor-core products, and the state update is a fourth product."""

import torch
import triton
import triton.language as tl

CHUNK = 64


@triton.jit
def _ssd_kernel(x_ptr, dt_ptr, a_ptr, b_ptr, c_ptr, d_ptr, dt_bias_ptr, out_ptr, seq_len, heads,
                HEAD_DIM: tl.constexpr, STATE: tl.constexpr, CHUNK: tl.constexpr):
    bh = tl.program_id(0)
    batch = bh // heads
    head = bh % heads
    rows = tl.arange(0, CHUNK)
    dims = tl.arange(0, HEAD_DIM)
    states = tl.arange(0, STATE)
    causal = rows[:, None] >= rows[None, :]
    a = tl.load(a_ptr + head).to(tl.float32)
    d_skip = tl.load(d_ptr + head).to(tl.float32)
    dt_bias = tl.load(dt_bias_ptr + head).to(tl.float32)
    x_base = (batch.to(tl.int64) * seq_len * heads + head) * HEAD_DIM
    dt_base = batch.to(tl.int64) * seq_len * heads + head
    bc_base = batch.to(tl.int64) * seq_len * STATE
    state = tl.zeros([HEAD_DIM, STATE], dtype=tl.float32)
    for start in range(0, seq_len, CHUNK):
        tokens = (start + rows).to(tl.int64)
        x_offsets = x_base + tokens[:, None] * (heads * HEAD_DIM) + dims[None, :]
        x = tl.load(x_ptr + x_offsets).to(tl.float32)  # [Q, P]
        raw = tl.load(dt_ptr + dt_base + tokens * heads).to(tl.float32) + dt_bias
        dt = tl.where(raw > 20.0, raw, tl.log(1.0 + tl.exp(tl.minimum(raw, 20.0))))  # softplus, [Q]
        cumulative = tl.cumsum(dt * a, axis=0)  # [Q]
        total = tl.sum(dt * a, axis=0)
        b = tl.load(b_ptr + bc_base + tokens[:, None] * STATE + states[None, :]).to(tl.float16)  # [Q, N]
        c = tl.load(c_ptr + bc_base + tokens[:, None] * STATE + states[None, :]).to(tl.float16)
        segment = tl.where(causal, cumulative[:, None] - cumulative[None, :], float("-inf"))
        scores = tl.dot(c, tl.trans(b)) * tl.exp(segment) * dt[None, :]  # [Q, Q]
        y = tl.dot(scores.to(tl.float16), x.to(tl.float16))  # [Q, P]
        carried = tl.dot(c, tl.trans(state.to(tl.float16)))  # [Q, P]
        y += carried * tl.exp(cumulative)[:, None] + d_skip * x
        tl.store(out_ptr + x_offsets, y.to(out_ptr.dtype.element_ty))
        weights = dt * tl.exp(total - cumulative)  # [Q]
        state = state * tl.exp(total) + tl.dot(tl.trans((x * weights[:, None]).to(tl.float16)), b)


def solve(x, dt_raw, a, b, c, d, dt_bias):
    x = x.contiguous()
    dt_raw = dt_raw.contiguous()
    a = a.contiguous()
    b = b.contiguous()
    c = c.contiguous()
    d = d.contiguous()
    dt_bias = dt_bias.contiguous()
    batch, seq_len, heads, head_dim = x.shape
    out = torch.empty_like(x)
    _ssd_kernel[(batch * heads,)](x, dt_raw, a, b, c, d, dt_bias, out, seq_len, heads,
                                  HEAD_DIM=head_dim, STATE=b.shape[-1], CHUNK=CHUNK, num_warps=8)
    return out
