"""numba-cuda solution for 43_mla_fp8_latent_cache_gather: one block per packed row finds its sequence in cu_seq_lens
and its page through the block table, decodes its 512 fp8 latent bytes through a 256-entry table (numba has no fp8
type; the table is torch's own fp8 cast of every byte), multiplies each by its tile's scale into a float32 row, and
copies the 64 bf16 rope dims as raw 16-bit values; torch casts the latent rows to bf16 beside them."""

import torch
from numba import cuda

THREADS = 128
TILE = 128


@cuda.jit
def _gather(latent_codes, scales, rope_bits, block_table, cu_seq_lens, decode, latent_out, rope_out):
    row = cuda.blockIdx.x
    sequence = 0
    while cu_seq_lens[sequence + 1] <= row:
        sequence += 1
    page_size = latent_codes.shape[1]
    position = row - cu_seq_lens[sequence]
    page = block_table[sequence, position // page_size]
    slot = position % page_size
    for d in range(cuda.threadIdx.x, latent_codes.shape[2], cuda.blockDim.x):
        latent_out[row, d] = decode[latent_codes[page, slot, d]] * scales[page, slot, d // TILE]
    for d in range(cuda.threadIdx.x, rope_bits.shape[2], cuda.blockDim.x):
        rope_out[row, d] = rope_bits[page, slot, d]


def solve(latent, scales, rope, block_table, cu_seq_lens):
    latent_dim = latent.shape[2]
    total = int(cu_seq_lens[-1].item())
    decode = torch.arange(256, device=latent.device, dtype=torch.uint8).view(latent.dtype).float()
    latent_rows = torch.empty(total, latent_dim, device=latent.device, dtype=torch.float32)
    out = torch.empty(total, latent_dim + rope.shape[2], device=latent.device, dtype=rope.dtype)
    rope_view = out.view(torch.int16)[:, latent_dim:]  # the rope dims of each packed row, as raw bits
    _gather[total, THREADS](latent.contiguous().view(torch.uint8), scales.contiguous(),
                            rope.contiguous().view(torch.int16), block_table.contiguous(), cu_seq_lens.contiguous(),
                            decode, latent_rows, rope_view)
    out[:, :latent_dim].copy_(latent_rows)  # a cast to bf16 into the packed rows
    return out
