"""Gated delta rule prefill as one Triton scan: each program owns a [128, 32] slice of one value head's state in
registers and walks the tokens, normalising q and k, decaying, recalling k S, writing beta (v - k S) and reading q S;
the next token's inputs are loaded while the current one is processed."""

import torch
import triton
import triton.language as tl

VALUE_BLOCK = 32
NORM_EPS = 1e-6


@triton.jit
def _gated_delta_kernel(q_ptr, k_ptr, v_ptr, a_ptr, b_ptr, a_log_ptr, dt_bias_ptr, out_ptr, state_ptr,
                        seq_len, key_heads, value_heads, scale, eps,
                        KEY_DIM: tl.constexpr, VALUE_DIM: tl.constexpr, BV: tl.constexpr):
    bh = tl.program_id(0)
    value_block = tl.program_id(1)
    batch = bh // value_heads
    head = bh % value_heads
    key_head = head // (value_heads // key_heads)
    keys = tl.arange(0, KEY_DIM)
    cols = value_block * BV + tl.arange(0, BV)
    key_base = (batch.to(tl.int64) * seq_len * key_heads + key_head) * KEY_DIM
    value_base = (batch.to(tl.int64) * seq_len * value_heads + head) * VALUE_DIM
    gate_base = batch.to(tl.int64) * seq_len * value_heads + head
    key_stride = key_heads * KEY_DIM
    value_stride = value_heads * VALUE_DIM
    a_scale = tl.exp(tl.load(a_log_ptr + head).to(tl.float32))
    dt_bias = tl.load(dt_bias_ptr + head).to(tl.float32)
    state = tl.zeros([KEY_DIM, BV], dtype=tl.float32)
    q_next = tl.load(q_ptr + key_base + keys).to(tl.float32)
    k_next = tl.load(k_ptr + key_base + keys).to(tl.float32)
    v_next = tl.load(v_ptr + value_base + cols).to(tl.float32)
    a_next = tl.load(a_ptr + gate_base).to(tl.float32)
    b_next = tl.load(b_ptr + gate_base).to(tl.float32)
    for t in range(seq_len):
        q = q_next
        k = k_next
        v = v_next
        a = a_next
        b = b_next
        following = tl.minimum(t + 1, seq_len - 1).to(tl.int64)
        q_next = tl.load(q_ptr + key_base + following * key_stride + keys).to(tl.float32)
        k_next = tl.load(k_ptr + key_base + following * key_stride + keys).to(tl.float32)
        v_next = tl.load(v_ptr + value_base + following * value_stride + cols).to(tl.float32)
        a_next = tl.load(a_ptr + gate_base + following * value_heads).to(tl.float32)
        b_next = tl.load(b_ptr + gate_base + following * value_heads).to(tl.float32)

        q = q * (scale / tl.sqrt(tl.sum(q * q, axis=0) + eps))
        k = k / tl.sqrt(tl.sum(k * k, axis=0) + eps)
        x = a + dt_bias
        softplus = tl.where(x > 20.0, x, tl.log(1.0 + tl.exp(tl.minimum(x, 20.0))))
        decay = tl.exp(-a_scale * softplus)
        beta = 1.0 / (1.0 + tl.exp(-b))
        state = state * decay
        recalled = tl.sum(state * k[:, None], axis=0)  # [BV]
        delta = (v - recalled) * beta
        state = state + k[:, None] * delta[None, :]
        out = tl.sum(state * q[:, None], axis=0)
        tl.store(out_ptr + value_base + t.to(tl.int64) * value_stride + cols, out.to(out_ptr.dtype.element_ty))
    state_offsets = bh.to(tl.int64) * KEY_DIM * VALUE_DIM + keys[:, None] * VALUE_DIM + cols[None, :]
    tl.store(state_ptr + state_offsets, state.to(state_ptr.dtype.element_ty))


def solve(q, k, v, a, b, a_log, dt_bias):
    q = q.contiguous()
    k = k.contiguous()
    v = v.contiguous()
    a = a.contiguous()
    b = b.contiguous()
    a_log = a_log.contiguous()
    dt_bias = dt_bias.contiguous()
    batch, seq_len, key_heads, key_dim = q.shape
    value_heads, value_dim = v.shape[2], v.shape[3]
    out = torch.empty_like(v)
    state = torch.empty(batch, value_heads, key_dim, value_dim, device=v.device, dtype=v.dtype)
    grid = (batch * value_heads, value_dim // VALUE_BLOCK)
    _gated_delta_kernel[grid](q, k, v, a, b, a_log, dt_bias, out, state, seq_len, key_heads, value_heads,
                              key_dim**-0.5, NORM_EPS, KEY_DIM=key_dim, VALUE_DIM=value_dim, BV=VALUE_BLOCK,
                              num_warps=4)
    return out, state
