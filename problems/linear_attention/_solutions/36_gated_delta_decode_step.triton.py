"""Gated delta rule decode step in one Triton kernel: each program reads a [128, 64] bf16 slice of one value head's
state once, normalises q and k, decays, recalls k S, writes beta (v - k S), reads q S and stores the slice back."""

import torch
import triton
import triton.language as tl

VALUE_BLOCK = 64
NORM_EPS = 1e-6


@triton.jit
def _decode_kernel(q_ptr, k_ptr, v_ptr, a_ptr, b_ptr, a_log_ptr, dt_bias_ptr, state_ptr, out_ptr, new_state_ptr,
                   key_heads, value_heads, scale, eps,
                   KEY_DIM: tl.constexpr, VALUE_DIM: tl.constexpr, BV: tl.constexpr):
    bh = tl.program_id(0)
    value_block = tl.program_id(1)
    batch = bh // value_heads
    head = bh % value_heads
    key_head = head // (value_heads // key_heads)
    keys = tl.arange(0, KEY_DIM)
    cols = value_block * BV + tl.arange(0, BV)
    key_offset = (batch.to(tl.int64) * key_heads + key_head) * KEY_DIM
    state_offsets = bh.to(tl.int64) * KEY_DIM * VALUE_DIM + keys[:, None] * VALUE_DIM + cols[None, :]
    state = tl.load(state_ptr + state_offsets).to(tl.float32)  # [K, BV]
    q = tl.load(q_ptr + key_offset + keys).to(tl.float32)
    k = tl.load(k_ptr + key_offset + keys).to(tl.float32)
    v = tl.load(v_ptr + bh.to(tl.int64) * VALUE_DIM + cols).to(tl.float32)
    a = tl.load(a_ptr + bh).to(tl.float32)
    b = tl.load(b_ptr + bh).to(tl.float32)
    a_scale = tl.exp(tl.load(a_log_ptr + head).to(tl.float32))
    dt_bias = tl.load(dt_bias_ptr + head).to(tl.float32)
    q = q * (scale / tl.sqrt(tl.sum(q * q, axis=0) + eps))
    k = k / tl.sqrt(tl.sum(k * k, axis=0) + eps)
    x = a + dt_bias
    softplus = tl.where(x > 20.0, x, tl.log(1.0 + tl.exp(tl.minimum(x, 20.0))))
    decay = tl.exp(-a_scale * softplus)
    beta = 1.0 / (1.0 + tl.exp(-b))
    state = state * decay
    recalled = tl.sum(state * k[:, None], axis=0)
    delta = (v - recalled) * beta
    state = state + k[:, None] * delta[None, :]
    out = tl.sum(state * q[:, None], axis=0)
    tl.store(out_ptr + bh.to(tl.int64) * VALUE_DIM + cols, out.to(out_ptr.dtype.element_ty))
    tl.store(new_state_ptr + state_offsets, state.to(new_state_ptr.dtype.element_ty))


def solve(q, k, v, a, b, a_log, dt_bias, state):
    q = q.contiguous()
    k = k.contiguous()
    v = v.contiguous()
    a = a.contiguous()
    b = b.contiguous()
    a_log = a_log.contiguous()
    dt_bias = dt_bias.contiguous()
    state = state.contiguous()
    batch, key_heads, key_dim = q.shape
    value_heads, value_dim = v.shape[1], v.shape[2]
    out = torch.empty_like(v)
    new_state = torch.empty_like(state)
    grid = (batch * value_heads, value_dim // VALUE_BLOCK)
    _decode_kernel[grid](q, k, v, a, b, a_log, dt_bias, state, out, new_state, key_heads, value_heads,
                         key_dim**-0.5, NORM_EPS, KEY_DIM=key_dim, VALUE_DIM=value_dim, BV=VALUE_BLOCK, num_warps=4)
    return out, new_state
