"""Triton solution: one program per (sequence, cached page): the page's 64 fp8 keys are widened to bf16, one tl.dot
with the 64 indexer queries gives the [64 heads, 64 tokens] scores in fp32, then scale, ReLU and the weighted head
sum happen in registers; pages past the sequence only write -inf.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _indexer_page(q_ptr, w_ptr, k_ptr, scale_ptr, table_ptr, lens_ptr, out_ptr, stride_table, context,
                  HEADS: tl.constexpr, HEAD_DIM: tl.constexpr, PAGE_SIZE: tl.constexpr):
    b = tl.program_id(0)
    page_index = tl.program_id(1)
    seq_len = tl.load(lens_ptr + b)
    tokens = page_index * PAGE_SIZE + tl.arange(0, PAGE_SIZE)
    out_offs = b.to(tl.int64) * context + tokens
    if page_index * PAGE_SIZE >= seq_len:
        tl.store(out_ptr + out_offs, tl.full([PAGE_SIZE], float("-inf"), tl.float32))
    else:
        page = tl.load(table_ptr + b * stride_table + page_index).to(tl.int64)
        heads = tl.arange(0, HEADS)
        dims = tl.arange(0, HEAD_DIM)
        slots = page * PAGE_SIZE + tl.arange(0, PAGE_SIZE)
        q = tl.load(q_ptr + (b * HEADS + heads)[:, None] * HEAD_DIM + dims[None, :])
        k = tl.load(k_ptr + slots[:, None] * HEAD_DIM + dims[None, :]).to(tl.bfloat16)  # e4m3 -> bf16 is exact
        scores = tl.dot(q, tl.trans(k))  # [HEADS, PAGE_SIZE], fp32
        scores = scores * tl.load(scale_ptr + slots)[None, :]
        w = tl.load(w_ptr + b * HEADS + heads)
        logits = tl.sum(tl.maximum(scores, 0.0) * w[:, None], 0)
        logits = tl.where(tokens < seq_len, logits, float("-inf"))
        tl.store(out_ptr + out_offs, logits)


def solve(q, weights, k_cache, k_scales, block_table, seq_lens):
    q, weights, k_cache, k_scales = q.contiguous(), weights.contiguous(), k_cache.contiguous(), k_scales.contiguous()
    block_table = block_table.contiguous()
    batch, heads, dim = q.shape
    page_size = k_cache.shape[1]
    pages_per_seq = block_table.shape[1]
    context = pages_per_seq * page_size
    out = torch.empty(batch, context, device=q.device, dtype=torch.float32)
    _indexer_page[(batch, pages_per_seq)](q, weights, k_cache, k_scales, block_table, seq_lens.contiguous(), out,
                                          block_table.stride(0), context, HEADS=heads, HEAD_DIM=dim,
                                          PAGE_SIZE=page_size, num_warps=4)
    return out
