"""JAX Pallas solution for 43_mla_fp8_latent_cache_gather: one program per (sequence, cached page) dequantises the
page's 64 tokens tile by tile (a [64, 128] fp8 load decoded to float32 times one scale per token) and stores them with
the rope dims into the packed rows, masked past the sequence's end, reading each byte once. The kernel is compiled
once: its output has the block table's capacity in rows (a shape fixed by the inputs' shapes), and solve returns the
first cu_seq_lens[-1] of them as a view, so a new draw's total does not recompile it."""

import jax
import jax.numpy as jnp
import torch
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plgpu

TILE = 128


def _params(num_warps, num_stages):
    make = getattr(plgpu, "CompilerParams", None) or getattr(plgpu, "TritonCompilerParams")
    return make(num_warps=num_warps, num_stages=num_stages)


def _decode_e4m3(codes):
    """fp8 e4m3fn bytes (as int32) to float32: the data is saturated to +-448, so no NaN codes occur."""
    sign = (codes >> 7) & 1
    exponent = (codes >> 3) & 0xF
    mantissa = codes & 0x7
    normal = jax.lax.bitcast_convert_type((sign << 31) | ((exponent + 120) << 23) | (mantissa << 20), jnp.float32)
    subnormal = jnp.where(sign == 1, -1.0, 1.0) * mantissa.astype(jnp.float32) * (2.0 ** -9)
    return jnp.where(exponent == 0, subnormal, normal)


def _kernel(cu_ref, table_ref, latent_ref, scales_ref, rope_ref, o_ref):
    b = pl.program_id(0)
    index = pl.program_id(1)
    page_size = latent_ref.shape[1]
    latent_dim = latent_ref.shape[2]
    start = cu_ref[b]
    seq_len = cu_ref[b + 1] - start
    first = index * page_size
    ok = first + jax.lax.broadcasted_iota(jnp.int32, (page_size,), 0) < seq_len  # the page's tokens in use
    page = table_ref[b, index]
    rows = pl.ds(start + first, page_size)
    for t in range(latent_dim // TILE):
        dims = pl.ds(t * TILE, TILE)
        codes = plgpu.load(latent_ref.at[page, :, dims], mask=ok[:, None], other=0).astype(jnp.int32)
        scale = scales_ref[page, :, t]  # [page_size]: one scale per token for this tile
        values = _decode_e4m3(codes) * scale[:, None]
        plgpu.store(o_ref.at[rows, dims], values.astype(o_ref.dtype), mask=ok[:, None])
    rope = plgpu.load(rope_ref.at[page, :, :], mask=ok[:, None], other=0)
    plgpu.store(o_ref.at[rows, pl.ds(latent_dim, rope_ref.shape[2])], rope, mask=ok[:, None])


@jax.jit
def _gather(cu_seq_lens, block_table, latent_bytes, scales, rope):
    batch, pages_per_seq = block_table.shape
    capacity = batch * pages_per_seq * latent_bytes.shape[1]  # every row the block table can address
    width = latent_bytes.shape[2] + rope.shape[2]
    whole = lambda a: pl.BlockSpec(a.shape, lambda b, i: (0,) * a.ndim)  # noqa: E731
    return pl.pallas_call(
        _kernel, out_shape=jax.ShapeDtypeStruct((capacity, width), rope.dtype), grid=(batch, pages_per_seq),
        in_specs=[whole(cu_seq_lens), whole(block_table), whole(latent_bytes), whole(scales), whole(rope)],
        out_specs=pl.BlockSpec((capacity, width), lambda b, i: (0, 0)),
        compiler_params=_params(4, 1),
    )(cu_seq_lens, block_table, latent_bytes, scales, rope)


def solve(latent, scales, rope, block_table, cu_seq_lens):
    num_pages, page_size, latent_dim = latent.shape
    assert latent_dim % TILE == 0 and latent_dim // TILE == scales.shape[-1]
    j = lambda t: jax.dlpack.from_dlpack(t.contiguous())  # noqa: E731
    total = int(cu_seq_lens[-1].item())  # the packed buffer's size (a read, no arithmetic)
    out = _gather(j(cu_seq_lens.to(torch.int32)), j(block_table.to(torch.int32)), j(latent.view(torch.uint8)),
                  j(scales), j(rope))
    return torch.from_dlpack(out)[:total]
