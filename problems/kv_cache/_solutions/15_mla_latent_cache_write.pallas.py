"""JAX Pallas solution for 15_mla_latent_cache_write: rows are seen as 9 chunks of 64 (8 of compressed KV, 1 of
rotary key). One program per token RMS-normalises the compressed chunks, rotates the rotary chunk with interleaved
(GPT-J) pairs and writes the 576-wide entry into its slot of the cache, an output aliased to the old cache. The pair
partner x[i ^ 1] and the per-pair cos/sin are spread over the 64 lanes with small one-hot selections (no gathers or
strided loads in the kernel)."""

import jax
import jax.numpy as jnp
import torch
from jax.experimental import pallas as pl

CHUNK = 64
LATENT_CHUNKS = 8
EPS = 1e-6


def _kernel(pos_ref, slot_ref, latent_ref, rope_ref, w_ref, cs_ref, cache_ref, o_ref):
    del cache_ref  # aliased to o_ref
    token = pl.program_id(0)
    slot = slot_ref[token]
    latent = latent_ref[...].astype(jnp.float32)  # [8, 64]
    inverse_rms = jax.lax.rsqrt(jnp.sum(latent * latent) / (LATENT_CHUNKS * CHUNK) + EPS)
    o_ref[slot, pl.ds(0, LATENT_CHUNKS), :] = (latent * inverse_rms * w_ref[...].astype(jnp.float32)).astype(
        o_ref.dtype)
    x = rope_ref[...].astype(jnp.float32)  # [64], pairs (2i, 2i + 1)
    cos_sin = cs_ref[pos_ref[token], :]  # [64]: cos of pair i at i, sin at 32 + i
    source = jax.lax.broadcasted_iota(jnp.int32, (CHUNK, CHUNK), 0)
    lane = jax.lax.broadcasted_iota(jnp.int32, (CHUNK, CHUNK), 1)
    pick = lambda values, index: jnp.sum(jnp.where(source == index, values[:, None], 0.0), axis=0)  # noqa: E731
    partner = pick(x, lane ^ 1)
    cos = pick(cos_sin, lane // 2)
    sin = pick(cos_sin, CHUNK // 2 + lane // 2)
    odd = (jax.lax.broadcasted_iota(jnp.int32, (CHUNK,), 0) % 2) == 1
    rotated = x * cos + jnp.where(odd, partner, -partner) * sin  # even: e cos - o sin; odd: o cos + e sin
    o_ref[slot, LATENT_CHUNKS, :] = rotated.astype(o_ref.dtype)


@jax.jit
def _write(positions, slots, kv_latent, norm_weight, cos_sin, cache_rows):
    tokens = kv_latent.shape[0]
    chunks = kv_latent.reshape(tokens, LATENT_CHUNKS + 1, CHUNK)
    whole = lambda a: pl.BlockSpec(a.shape, lambda t: (0,) * a.ndim)  # noqa: E731
    return pl.pallas_call(
        _kernel, out_shape=jax.ShapeDtypeStruct(cache_rows.shape, cache_rows.dtype), grid=(tokens,),
        in_specs=[whole(positions), whole(slots),
                  pl.BlockSpec((None, LATENT_CHUNKS, CHUNK), lambda t: (t, 0, 0)),
                  pl.BlockSpec((None, None, CHUNK), lambda t: (t, LATENT_CHUNKS, 0)),
                  pl.BlockSpec((LATENT_CHUNKS, CHUNK), lambda t: (0, 0)), whole(cos_sin), whole(cache_rows)],
        out_specs=whole(cache_rows), input_output_aliases={6: 0},
    )(positions, slots, chunks, chunks, norm_weight.reshape(LATENT_CHUNKS, CHUNK), cos_sin, cache_rows)


def solve(kv_latent, norm_weight, positions, cos_sin_cache, kv_cache, slot_mapping):
    pages, page_size, width = kv_cache.shape
    j = lambda t: jax.dlpack.from_dlpack(t.contiguous())  # noqa: E731
    new_cache = _write(j(positions.to(torch.int32)), j(slot_mapping.to(torch.int32)), j(kv_latent), j(norm_weight),
                       j(cos_sin_cache), j(kv_cache.view(pages * page_size, width // CHUNK, CHUNK)))
    return torch.from_dlpack(new_cache).view(kv_cache.shape)
