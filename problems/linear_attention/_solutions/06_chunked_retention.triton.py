"""Chunked retention in one Triton kernel: per (sequence-head, value block) the [dim, block] state stays in registers,
each 64-token chunk is three tensor-core products (intra-chunk scores, scores x values, queries x carried state) and a
fourth for the state update."""

import torch
import triton
import triton.language as tl

CHUNK = 64
VALUE_BLOCK = 32


@triton.jit
def _retention_kernel(q_ptr, k_ptr, v_ptr, decay_ptr, out_ptr, seq_len, heads, scale,
                      DIM: tl.constexpr, CHUNK: tl.constexpr, BV: tl.constexpr):
    bh = tl.program_id(0)
    value_block = tl.program_id(1)
    log_decay = tl.log(tl.load(decay_ptr + bh % heads).to(tl.float32))
    base = bh.to(tl.int64) * seq_len * DIM
    rows = tl.arange(0, CHUNK)
    dims = tl.arange(0, DIM)
    cols = value_block * BV + tl.arange(0, BV)
    index = rows.to(tl.float32)
    distance = index[:, None] - index[None, :]
    intra_decay = tl.where(distance >= 0, tl.exp(log_decay * tl.maximum(distance, 0.0)), 0.0)  # [C, C]
    query_decay = tl.exp(log_decay * (index + 1.0))  # gamma^(i+1)
    key_decay = tl.exp(log_decay * ((CHUNK - 1) - index))  # gamma^(C-1-j)
    chunk_decay = tl.exp(log_decay * CHUNK)
    state = tl.zeros([DIM, BV], dtype=tl.float32)
    for start in range(0, seq_len, CHUNK):
        token_offsets = base + (start + rows).to(tl.int64)[:, None] * DIM
        q = tl.load(q_ptr + token_offsets + dims[None, :]).to(tl.float32) * scale  # [C, D]
        k = tl.load(k_ptr + token_offsets + dims[None, :])  # [C, D] fp16
        v = tl.load(v_ptr + token_offsets + cols[None, :])  # [C, BV] fp16
        scores = tl.dot(q.to(tl.float16), tl.trans(k)) * intra_decay  # [C, C] fp32
        out = tl.dot(scores.to(tl.float16), v)
        out += tl.dot((q * query_decay[:, None]).to(tl.float16), state.to(tl.float16))
        tl.store(out_ptr + token_offsets + cols[None, :], out.to(out_ptr.dtype.element_ty))
        decayed_keys = (k.to(tl.float32) * key_decay[:, None]).to(tl.float16)
        state = state * chunk_decay + tl.dot(tl.trans(decayed_keys), v)


def solve(q, k, v, decay):
    q = q.contiguous()
    k = k.contiguous()
    v = v.contiguous()
    decay = decay.contiguous()
    batch, heads, seq_len, dim = q.shape
    out = torch.empty_like(q)
    grid = (batch * heads, dim // VALUE_BLOCK)
    _retention_kernel[grid](q, k, v, decay, out, seq_len, heads, dim**-0.5,
                            DIM=dim, CHUNK=CHUNK, BV=VALUE_BLOCK, num_warps=4)
    return out
