"""Triton solution: one program per (sequence, cached page); its 64 tokens are dequantised tile by tile (a [64, 128]
fp8 load times one scale per row) and stored with the rope dims into the packed rows, reading each byte once.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _gather_page(latent_ptr, scale_ptr, rope_ptr, table_ptr, cu_ptr, out_ptr, stride_table,
                 PAGE_SIZE: tl.constexpr, LATENT_DIM: tl.constexpr, TILE: tl.constexpr, ROPE_DIM: tl.constexpr):
    b = tl.program_id(0)
    page_index = tl.program_id(1)
    seq_start = tl.load(cu_ptr + b)
    seq_len = tl.load(cu_ptr + b + 1) - seq_start
    first = page_index * PAGE_SIZE
    if first < seq_len:
        page = tl.load(table_ptr + b * stride_table + page_index).to(tl.int64)
        tokens = tl.arange(0, PAGE_SIZE)
        ok = first + tokens < seq_len
        slots = page * PAGE_SIZE + tokens
        rows = (seq_start + first + tokens).to(tl.int64) * (LATENT_DIM + ROPE_DIM)  # row offsets
        dims = tl.arange(0, TILE)
        for tile in tl.static_range(LATENT_DIM // TILE):
            codes = tl.load(latent_ptr + slots[:, None] * LATENT_DIM + tile * TILE + dims[None, :], mask=ok[:, None],
                            other=0.0)
            scale = tl.load(scale_ptr + slots * (LATENT_DIM // TILE) + tile, mask=ok, other=0.0)
            values = codes.to(tl.float32) * scale[:, None]
            tl.store(out_ptr + rows[:, None] + tile * TILE + dims[None, :], values.to(out_ptr.dtype.element_ty),
                     mask=ok[:, None])
        rope_dims = tl.arange(0, ROPE_DIM)
        rope = tl.load(rope_ptr + slots[:, None] * ROPE_DIM + rope_dims[None, :], mask=ok[:, None], other=0.0)
        tl.store(out_ptr + rows[:, None] + LATENT_DIM + rope_dims[None, :], rope, mask=ok[:, None])


def solve(latent, scales, rope, block_table, cu_seq_lens):
    latent, scales, rope = latent.contiguous(), scales.contiguous(), rope.contiguous()
    block_table = block_table.contiguous()
    num_pages, page_size, latent_dim = latent.shape
    rope_dim = rope.shape[-1]
    total = int(cu_seq_lens[-1].item())  # the packed buffer's size (a read, no arithmetic)
    out = torch.empty(total, latent_dim + rope_dim, device=rope.device, dtype=rope.dtype)
    grid = (block_table.shape[0], block_table.shape[1])
    _gather_page[grid](latent, scales, rope, block_table, cu_seq_lens, out, block_table.stride(0),
                       PAGE_SIZE=page_size, LATENT_DIM=latent_dim, TILE=latent_dim // scales.shape[-1],
                       ROPE_DIM=rope_dim, num_warps=4)
    return out
