"""JAX Pallas solution for 39_dsa_lightning_indexer_decode: one program per (sequence, page) decodes the page's 64
fp8 e4m3 keys (passed as bytes) from their bit fields into bf16 (exact), takes the 64 heads x 64 keys scores on the
tensor cores, scales them per key, and sums weight * relu(score) over the heads; positions past the sequence's
length get -inf."""

import jax
import jax.numpy as jnp
import torch
from jax.experimental import pallas as pl


def _decode_e4m3(codes):
    """fp8 e4m3fn bytes (as int32) to float32; the codes are saturated to +-448, so no NaN codes occur."""
    sign = (codes >> 7) & 1
    exponent = (codes >> 3) & 0xF
    mantissa = codes & 0x7
    normal = jax.lax.bitcast_convert_type((sign << 31) | ((exponent + 120) << 23) | (mantissa << 20), jnp.float32)
    subnormal = jnp.where(sign == 1, -1.0, 1.0) * mantissa.astype(jnp.float32) * (2.0 ** -9)
    return jnp.where(exponent == 0, subnormal, normal)


def _kernel(lens_ref, table_ref, q_ref, w_ref, k_ref, s_ref, o_ref):
    b, p = pl.program_id(0), pl.program_id(1)
    page = table_ref[b, p]
    page_size = k_ref.shape[1]
    keys = _decode_e4m3(k_ref[page, :, :].astype(jnp.int32)).astype(jnp.bfloat16)  # [slots, D]
    scores = jax.lax.dot_general(q_ref[...], keys, (((1,), (1,)), ((), ())), preferred_element_type=jnp.float32)
    scores = scores * s_ref[page, :][None, :]  # [H, slots]
    logits = jnp.sum(jnp.maximum(scores, 0.0) * w_ref[...][:, None], axis=0)
    position = p * page_size + jax.lax.broadcasted_iota(jnp.int32, (page_size,), 0)
    o_ref[...] = jnp.where(position < lens_ref[b], logits, -jnp.inf)


@jax.jit
def _indexer(seq_lens, block_table, q, weights, k_bytes, k_scales):
    batch, heads, dim = q.shape
    pages_per_seq = block_table.shape[1]
    page_size = k_bytes.shape[1]
    whole = lambda a: pl.BlockSpec(a.shape, lambda b, p: (0,) * a.ndim)  # noqa: E731
    return pl.pallas_call(
        _kernel, out_shape=jax.ShapeDtypeStruct((batch, pages_per_seq * page_size), jnp.float32),
        grid=(batch, pages_per_seq),
        in_specs=[whole(seq_lens), whole(block_table), pl.BlockSpec((None, heads, dim), lambda b, p: (b, 0, 0)),
                  pl.BlockSpec((None, heads), lambda b, p: (b, 0)), whole(k_bytes), whole(k_scales)],
        out_specs=pl.BlockSpec((None, page_size), lambda b, p: (b, p)),
    )(seq_lens, block_table, q, weights, k_bytes, k_scales)


def solve(q, weights, k_cache, k_scales, block_table, seq_lens):
    j = lambda t: jax.dlpack.from_dlpack(t.contiguous())  # noqa: E731
    out = _indexer(j(seq_lens.to(torch.int32)), j(block_table.to(torch.int32)), j(q), j(weights),
                   j(k_cache.view(torch.uint8)), j(k_scales))
    return torch.from_dlpack(out)
