"""Gated linear attention, chunk by chunk in one Triton kernel: per (sequence-head, value block) the [key, block] state
stays in registers; inside a 32-token chunk the cumulative log-gates turn the recurrence into masked products
(q e^B)(k e^-B)^T, and the chunk's end state is carried with per-channel decay e^B_last."""

import torch
import triton
import triton.language as tl

CHUNK = 32
VALUE_BLOCK = 32
GATE_NORMALIZER = 16.0


@triton.jit
def _gla_kernel(q_ptr, k_ptr, v_ptr, gk_ptr, out_ptr, seq_len, heads, scale, inv_normalizer,
                KEY_DIM: tl.constexpr, VALUE_DIM: tl.constexpr, CHUNK: tl.constexpr, BV: tl.constexpr):
    bh = tl.program_id(0)
    value_block = tl.program_id(1)
    batch = bh // heads
    head = bh % heads
    key_base = (batch.to(tl.int64) * seq_len * heads + head) * KEY_DIM
    value_base = (batch.to(tl.int64) * seq_len * heads + head) * VALUE_DIM
    rows = tl.arange(0, CHUNK)
    keys = tl.arange(0, KEY_DIM)
    cols = value_block * BV + tl.arange(0, BV)
    causal = rows[:, None] >= rows[None, :]
    state = tl.zeros([KEY_DIM, BV], dtype=tl.float32)
    for start in range(0, seq_len, CHUNK):
        tokens = (start + rows).to(tl.int64)
        key_offsets = key_base + tokens[:, None] * (heads * KEY_DIM) + keys[None, :]
        value_offsets = value_base + tokens[:, None] * (heads * VALUE_DIM) + cols[None, :]
        q = tl.load(q_ptr + key_offsets).to(tl.float32) * scale
        k = tl.load(k_ptr + key_offsets).to(tl.float32)
        gate_logits = tl.load(gk_ptr + key_offsets).to(tl.float32)
        v = tl.load(v_ptr + value_offsets).to(tl.float32)
        # log alpha = logsigmoid(x) / 16, with logsigmoid(x) = min(x, 0) - log(1 + exp(-|x|))
        log_alpha = (tl.minimum(gate_logits, 0.0) - tl.log(1.0 + tl.exp(-tl.abs(gate_logits)))) * inv_normalizer
        cumulative = tl.cumsum(log_alpha, axis=0)  # [C, K], inclusive
        total = tl.sum(log_alpha, axis=0)  # [K]
        q_gated = q * tl.exp(cumulative)
        k_gated = k * tl.exp(-cumulative)
        scores = tl.dot(q_gated, tl.trans(k_gated), input_precision="tf32")
        scores = tl.where(causal, scores, 0.0)
        out = tl.dot(scores, v, input_precision="tf32") + tl.dot(q_gated, state, input_precision="tf32")
        tl.store(out_ptr + value_offsets, out.to(out_ptr.dtype.element_ty))
        k_tail = k * tl.exp(total[None, :] - cumulative)
        state = state * tl.exp(total)[:, None] + tl.dot(tl.trans(k_tail), v, input_precision="tf32")


def solve(q, k, v, gk):
    q = q.contiguous()
    k = k.contiguous()
    v = v.contiguous()
    gk = gk.contiguous()
    batch, seq_len, heads, key_dim = q.shape
    value_dim = v.shape[-1]
    out = torch.empty_like(v)
    grid = (batch * heads, value_dim // VALUE_BLOCK)
    _gla_kernel[grid](q, k, v, gk, out, seq_len, heads, key_dim**-0.5, 1.0 / GATE_NORMALIZER,
                      KEY_DIM=key_dim, VALUE_DIM=value_dim, CHUNK=CHUNK, BV=VALUE_BLOCK, num_warps=8)
    return out
