"""Triton solution: one lane per sequence runs the FNV-1a chain in uint32 registers; 128 sequences per program.

Tokens are read page by page (16 loads per page, all independent of the running hash, so they overlap), and one
int64 hash is stored per page.
"""

import torch
import triton
import triton.language as tl

SEQS = 128  # sequences per program
FNV_OFFSET = 2166136261
FNV_PRIME = 16777619


@triton.jit
def _page_hash(tokens_ptr, out_ptr, batch, seq_len, pages,
               SEQS: tl.constexpr, PAGE_SIZE: tl.constexpr, FNV_OFFSET: tl.constexpr, FNV_PRIME: tl.constexpr):
    seqs = tl.program_id(0) * SEQS + tl.arange(0, SEQS)
    ok = seqs < batch
    row = tokens_ptr + seqs.to(tl.int64) * seq_len
    h = tl.full([SEQS], FNV_OFFSET, tl.uint32)
    for page in range(pages):
        for j in tl.static_range(PAGE_SIZE):
            token = tl.load(row + page * PAGE_SIZE + j, mask=ok, other=0).to(tl.uint32)
            h = (h ^ token) * FNV_PRIME  # uint32 arithmetic wraps mod 2^32
        tl.store(out_ptr + seqs.to(tl.int64) * pages + page, h.to(tl.int64), mask=ok)


def solve(tokens):
    tokens = tokens.contiguous()
    batch, seq_len = tokens.shape
    pages = seq_len // 16
    out = torch.empty(batch, pages, device=tokens.device, dtype=torch.int64)
    _page_hash[(triton.cdiv(batch, SEQS),)](tokens, out, batch, seq_len, pages, SEQS=SEQS, PAGE_SIZE=16,
                                            FNV_OFFSET=FNV_OFFSET, FNV_PRIME=FNV_PRIME, num_warps=4)
    return out
