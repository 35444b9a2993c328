"""JAX Pallas solution for 09_mla_absorbed_decode: one program per (sequence, head) walks the latent rows in blocks of
64 with an online softmax. A 576-wide row is seen as 9 chunks of 64: the first 8 (the latent, also the values) and
the last (the RoPE key) come through two block specs of the same cache."""

import jax
import jax.numpy as jnp
import torch
from jax.experimental import pallas as pl

BLOCK_K = 64
CHUNK = 64
LATENT_CHUNKS = 8
SOFTMAX_SCALE = (128 + 64) ** -0.5
NEG = -1e30


def _kernel(lens_ref, q_latent_ref, q_rope_ref, latent_ref, rope_ref, o_ref):
    length = lens_ref[pl.program_id(0)]
    q_latent = q_latent_ref[...].astype(jnp.float32) * SOFTMAX_SCALE  # [8, 64]
    q_rope = q_rope_ref[...].astype(jnp.float32) * SOFTMAX_SCALE  # [64]

    def body(i, carry):
        top, total, acc = carry
        latent = latent_ref[pl.ds(i * BLOCK_K, BLOCK_K), :, :].astype(jnp.float32)  # [BK, 8, 64]
        rope = rope_ref[pl.ds(i * BLOCK_K, BLOCK_K), :].astype(jnp.float32)  # [BK, 64]
        scores = jnp.sum(jnp.sum(latent * q_latent[None, :, :], axis=2), axis=1)
        scores = scores + jnp.sum(rope * q_rope[None, :], axis=1)
        position = i * BLOCK_K + jax.lax.broadcasted_iota(jnp.int32, (BLOCK_K,), 0)
        scores = jnp.where(position < length, scores, NEG)
        new_top = jnp.maximum(top, jnp.max(scores))
        rescale = jnp.exp(top - new_top)
        weights = jnp.exp(scores - new_top)
        acc = acc * rescale + jnp.sum(weights[:, None, None] * latent, axis=0)
        return new_top, total * rescale + jnp.sum(weights), acc

    start = (jnp.float32(NEG), jnp.float32(0.0), jnp.zeros((LATENT_CHUNKS, CHUNK), jnp.float32))
    _, total, acc = jax.lax.fori_loop(0, latent_ref.shape[0] // BLOCK_K, body, start)
    o_ref[...] = (acc / total).astype(o_ref.dtype)


@jax.jit
def _attend(q, kv_cache, seq_lens):
    batch, heads, width = q.shape
    context = kv_cache.shape[1]
    q_chunks = q.reshape(batch, heads, width // CHUNK, CHUNK)
    kv_chunks = kv_cache.reshape(batch, context, width // CHUNK, CHUNK)
    out = pl.pallas_call(
        _kernel, out_shape=jax.ShapeDtypeStruct((batch, heads, LATENT_CHUNKS, CHUNK), q.dtype), grid=(batch, heads),
        in_specs=[pl.BlockSpec((batch,), lambda b, h: (0,)),
                  pl.BlockSpec((None, None, LATENT_CHUNKS, CHUNK), lambda b, h: (b, h, 0, 0)),
                  pl.BlockSpec((None, None, None, CHUNK), lambda b, h: (b, h, LATENT_CHUNKS, 0)),
                  pl.BlockSpec((None, context, LATENT_CHUNKS, CHUNK), lambda b, h: (b, 0, 0, 0)),
                  pl.BlockSpec((None, context, None, CHUNK), lambda b, h: (b, 0, LATENT_CHUNKS, 0))],
        out_specs=pl.BlockSpec((None, None, LATENT_CHUNKS, CHUNK), lambda b, h: (b, h, 0, 0)),
    )(seq_lens, q_chunks, q_chunks, kv_chunks, kv_chunks)
    return out.reshape(batch, heads, LATENT_CHUNKS * CHUNK)


def solve(q, kv_cache, seq_lens):
    out = _attend(jax.dlpack.from_dlpack(q.contiguous()), jax.dlpack.from_dlpack(kv_cache.contiguous()),
                  jax.dlpack.from_dlpack(seq_lens.to(torch.int32)))
    return torch.from_dlpack(out)
