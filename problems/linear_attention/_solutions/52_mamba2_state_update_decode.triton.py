"""Triton solution: one program per (sequence, head, 16 state rows); the [16, 128] float32 state tile is read once,
updated in registers, written back, and contracted with C for the 16 outputs. The step is softplus as PyTorch
computes it, log1p(exp(raw)) through libdevice: log(1 + exp(raw)) loses most of the step's digits when exp(raw) is
tiny (raw near -7 for the smallest steps), and exp(step * A) then scales every state by a decay a few ulp off.
"""

import torch
import triton
import triton.language as tl

try:
    from triton.language.extra import libdevice
except ImportError:  # older layout
    from triton.language.extra.cuda import libdevice

BLOCK_P = 16


@triton.jit
def _state_update(x_ptr, dt_ptr, b_ptr, c_ptr, state_ptr, a_ptr, d_ptr, bias_ptr, y_ptr, out_state_ptr,
                  HEADS: tl.constexpr, HEAD_DIM: tl.constexpr, STATE_DIM: tl.constexpr, BLOCK_P: tl.constexpr):
    bh = tl.program_id(0)
    p = tl.program_id(1) * BLOCK_P + tl.arange(0, BLOCK_P)
    n = tl.arange(0, STATE_DIM)
    seq = bh // HEADS
    head = bh % HEADS
    raw = tl.load(dt_ptr + bh).to(tl.float32) + tl.load(bias_ptr + head)
    step = tl.where(raw > 20.0, raw, libdevice.log1p(libdevice.exp(tl.minimum(raw, 20.0))))  # softplus, as torch
    decay = libdevice.exp(step * tl.load(a_ptr + head))  # expf, not the ex2.approx that tl.exp lowers to
    x = tl.load(x_ptr + bh * HEAD_DIM + p).to(tl.float32)
    bv = tl.load(b_ptr + seq * STATE_DIM + n).to(tl.float32)
    cv = tl.load(c_ptr + seq * STATE_DIM + n).to(tl.float32)
    offs = (bh * HEAD_DIM + p).to(tl.int64)[:, None] * STATE_DIM + n[None, :]
    s = tl.load(state_ptr + offs)
    s = s * decay + (step * x)[:, None] * bv[None, :]
    tl.store(out_state_ptr + offs, s)
    y = tl.sum(s * cv[None, :], 1) + tl.load(d_ptr + head) * x
    tl.store(y_ptr + bh * HEAD_DIM + p, y.to(y_ptr.dtype.element_ty))


def solve(x, dt, b, c, state, a, d, dt_bias):
    x, dt, b, c, state = (t.contiguous() for t in (x, dt, b, c, state))
    batch, heads, head_dim = x.shape
    state_dim = state.shape[-1]
    y = torch.empty_like(x)
    new_state = torch.empty_like(state)
    _state_update[(batch * heads, head_dim // BLOCK_P)](
        x, dt, b, c, state, a.contiguous(), d.contiguous(), dt_bias.contiguous(), y, new_state,
        HEADS=heads, HEAD_DIM=head_dim, STATE_DIM=state_dim, BLOCK_P=BLOCK_P, num_warps=4)
    return y, new_state
