"""JAX Pallas solution for 43_mla_fp8_latent_cache_gather: one program per packed row finds its sequence in
cu_seq_lens (a scalar scan over the 32 boundaries) and its page through the block table, decodes its 512 fp8 e4m3
latent bytes into float32 (sign, exponent and mantissa fields rebuilt as float32 bits; subnormals as m * 2^-9),
scales each by its 128-dim tile's scale and writes the bf16 row: the latent dims, then the 64 rope dims, as 9
chunks of 64."""

import functools

import jax
import jax.numpy as jnp
import torch
from jax.experimental import pallas as pl

TILE = 128
CHUNK = 64


def _decode_e4m3(codes):
    """fp8 e4m3fn bytes (as int32) to float32: the data is saturated to +-448, so no NaN codes occur."""
    sign = (codes >> 7) & 1
    exponent = (codes >> 3) & 0xF
    mantissa = codes & 0x7
    normal = jax.lax.bitcast_convert_type((sign << 31) | ((exponent + 120) << 23) | (mantissa << 20), jnp.float32)
    subnormal = jnp.where(sign == 1, -1.0, 1.0) * mantissa.astype(jnp.float32) * (2.0 ** -9)
    return jnp.where(exponent == 0, subnormal, normal)


def _kernel(cu_ref, table_ref, latent_ref, scales_ref, rope_ref, o_ref, *, batch):
    row = pl.program_id(0)
    sequence = 0
    for b in range(1, batch):
        sequence = sequence + (cu_ref[b] <= row).astype(jnp.int32)
    page_size = latent_ref.shape[1]
    position = row - cu_ref[sequence]
    page = table_ref[sequence, position // page_size]
    slot = position % page_size
    for c in range(latent_ref.shape[2] // CHUNK):
        codes = latent_ref[page, slot, pl.ds(c * CHUNK, CHUNK)].astype(jnp.int32)
        o_ref[c, :] = (_decode_e4m3(codes) * scales_ref[page, slot, c * CHUNK // TILE]).astype(o_ref.dtype)
    o_ref[latent_ref.shape[2] // CHUNK, :] = rope_ref[page, slot, :]

@functools.partial(jax.jit, static_argnames=("total",))
def _gather(cu_seq_lens, block_table, latent_bytes, scales, rope, total):
    chunks = (latent_bytes.shape[2] + rope.shape[2]) // CHUNK
    whole = lambda a: pl.BlockSpec(a.shape, lambda t: (0,) * a.ndim)  # noqa: E731
    kernel = functools.partial(_kernel, batch=block_table.shape[0])
    out = pl.pallas_call(
        kernel, out_shape=jax.ShapeDtypeStruct((total, chunks, CHUNK), rope.dtype), grid=(total,),
        in_specs=[whole(cu_seq_lens), whole(block_table), whole(latent_bytes), whole(scales), whole(rope)],
        out_specs=pl.BlockSpec((None, chunks, CHUNK), lambda t: (t, 0, 0)),
    )(cu_seq_lens, block_table, latent_bytes, scales, rope)
    return out.reshape(total, chunks * CHUNK)


def solve(latent, scales, rope, block_table, cu_seq_lens):
    j = lambda t: jax.dlpack.from_dlpack(t.contiguous())  # noqa: E731
    out = _gather(j(cu_seq_lens.to(torch.int32)), j(block_table.to(torch.int32)), j(latent.view(torch.uint8)),
                  j(scales), j(rope), total=int(cu_seq_lens[-1].item()))
    return torch.from_dlpack(out)
