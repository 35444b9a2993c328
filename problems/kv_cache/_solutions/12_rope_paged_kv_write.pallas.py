"""JAX Pallas solution for 12_rope_paged_kv_write: one program per token rotates its query and key heads (neox halves,
cos|sin read at the token's position) in float32, returns the rotated queries and writes the rotated key and the
value rows into their slot of the caches, which are outputs aliased to the old caches."""

import jax
import jax.numpy as jnp
import torch
from jax.experimental import pallas as pl


def _kernel(pos_ref, slot_ref, q_ref, k_ref, v_ref, cs_ref, kc_ref, vc_ref, oq_ref, ok_ref, ov_ref):
    del kc_ref, vc_ref  # aliased to ok_ref / ov_ref
    token = pl.program_id(0)
    position = pos_ref[token]
    slot = slot_ref[token]
    half = q_ref.shape[2] // 2
    cos = cs_ref[pl.ds(position, 1), pl.ds(0, half)]  # [1, half]
    sin = cs_ref[pl.ds(position, 1), pl.ds(half, half)]
    q1 = q_ref[0, :, pl.ds(0, half)].astype(jnp.float32)  # [Hq, half]
    q2 = q_ref[0, :, pl.ds(half, half)].astype(jnp.float32)
    oq_ref[0, :, pl.ds(0, half)] = (q1 * cos - q2 * sin).astype(oq_ref.dtype)
    oq_ref[0, :, pl.ds(half, half)] = (q2 * cos + q1 * sin).astype(oq_ref.dtype)
    k1 = k_ref[0, :, pl.ds(0, half)].astype(jnp.float32)  # [Hkv, half]
    k2 = k_ref[0, :, pl.ds(half, half)].astype(jnp.float32)
    ok_ref[slot, :, pl.ds(0, half)] = (k1 * cos - k2 * sin).astype(ok_ref.dtype)
    ok_ref[slot, :, pl.ds(half, half)] = (k2 * cos + k1 * sin).astype(ok_ref.dtype)
    ov_ref[slot, :, :] = v_ref[0, :, :]


@jax.jit
def _rope_write(positions, slots, query, key, value, cos_sin, key_rows, value_rows):
    tokens, query_heads, dim = query.shape
    kv_heads = key.shape[1]
    whole = lambda a: pl.BlockSpec(a.shape, lambda t: (0,) * a.ndim)  # noqa: E731
    out = (jax.ShapeDtypeStruct(query.shape, query.dtype), jax.ShapeDtypeStruct(key_rows.shape, key_rows.dtype),
           jax.ShapeDtypeStruct(value_rows.shape, value_rows.dtype))
    return pl.pallas_call(
        _kernel, out_shape=out, grid=(tokens,),
        in_specs=[whole(positions), whole(slots), pl.BlockSpec((1, query_heads, dim), lambda t: (t, 0, 0)),
                  pl.BlockSpec((1, kv_heads, dim), lambda t: (t, 0, 0)),
                  pl.BlockSpec((1, kv_heads, dim), lambda t: (t, 0, 0)), whole(cos_sin), whole(key_rows),
                  whole(value_rows)],
        out_specs=(pl.BlockSpec((1, query_heads, dim), lambda t: (t, 0, 0)), whole(key_rows), whole(value_rows)),
        input_output_aliases={6: 1, 7: 2},
    )(positions, slots, query, key, value, cos_sin, key_rows, value_rows)


def solve(positions, query, key, value, cos_sin_cache, key_cache, value_cache, slot_mapping):
    pages, page_size, heads, dim = key_cache.shape
    j = lambda t: jax.dlpack.from_dlpack(t.contiguous())  # noqa: E731
    rotated, new_keys, new_values = _rope_write(
        j(positions.to(torch.int32)), j(slot_mapping.to(torch.int32)), j(query), j(key), j(value), j(cos_sin_cache),
        j(key_cache.view(pages * page_size, heads, dim)), j(value_cache.view(pages * page_size, heads, dim)))
    return (torch.from_dlpack(rotated), torch.from_dlpack(new_keys).view(key_cache.shape),
            torch.from_dlpack(new_values).view(value_cache.shape))
