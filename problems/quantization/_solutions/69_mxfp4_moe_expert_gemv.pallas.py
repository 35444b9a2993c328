"""JAX Pallas solution for 69_mxfp4_moe_expert_gemv: one program per (token, routed slot, 64 output rows) reads its
expert's packed rows MX block by MX block (16 bytes, 32 values), decodes the e2m1 codes from their bit fields and the
e8m0 scales as float32 exponent fields, and accumulates the products with the token's activations (split into even
and odd positions, as the bytes pack them); the expert's bias is added at the end."""

import jax
import jax.numpy as jnp
import torch
from jax.experimental import pallas as pl

ROWS = 64
BYTES_PER_BLOCK = 16  # 32 values of an MX block, two a byte


def _e2m1(codes):
    """e2m1 codes (int32) to float32: 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives."""
    magnitude = codes & 7
    exponent = magnitude >> 1
    half = (magnitude & 1).astype(jnp.float32) * 0.5
    power = jnp.where(exponent == 1, 1.0, jnp.where(exponent == 2, 2.0, 4.0))
    value = jnp.where(exponent == 0, half, (1.0 + half) * power)
    return jnp.where((codes & 8) != 0, -value, value)


def _kernel(ids_ref, x_ref, w_ref, s_ref, bias_ref, o_ref):
    pair = pl.program_id(0)
    top_k = ids_ref.shape[1]
    token = pair // top_k
    expert = ids_ref[token, pair % top_k]
    r0 = pl.program_id(1) * ROWS

    def block(blk, acc):
        packed = w_ref[expert, pl.ds(r0, ROWS), blk, :].astype(jnp.int32)  # [ROWS, 16]
        codes = s_ref[expert, pl.ds(r0, ROWS), blk].astype(jnp.int32)  # [ROWS]
        scale = jax.lax.bitcast_convert_type(codes << 23, jnp.float32)  # 2^(s - 127)
        even = x_ref[token, blk, :, 0].astype(jnp.float32)  # [16]
        odd = x_ref[token, blk, :, 1].astype(jnp.float32)
        dot = jnp.sum(_e2m1(packed & 15) * even[None, :] + _e2m1(packed >> 4) * odd[None, :], axis=1)
        return acc + dot * scale

    acc = jax.lax.fori_loop(0, w_ref.shape[2], block, jnp.zeros((ROWS,), jnp.float32))
    o_ref[...] = (acc + bias_ref[expert, pl.ds(r0, ROWS)].astype(jnp.float32)).astype(o_ref.dtype)


@jax.jit
def _expert_gemv(x, w_blocks, w_scales, bias, topk_ids):
    tokens, hidden = x.shape
    experts, rows, _ = w_blocks.shape
    top_k = topk_ids.shape[1]
    blocks = hidden // (2 * BYTES_PER_BLOCK)
    x4 = x.reshape(tokens, blocks, BYTES_PER_BLOCK, 2)
    w4 = w_blocks.reshape(experts, rows, blocks, BYTES_PER_BLOCK)
    whole = lambda a: pl.BlockSpec(a.shape, lambda *_: (0,) * a.ndim)  # noqa: E731
    out = pl.pallas_call(
        _kernel, out_shape=jax.ShapeDtypeStruct((tokens * top_k, rows), x.dtype), grid=(tokens * top_k, rows // ROWS),
        in_specs=[whole(topk_ids), whole(x4), whole(w4), whole(w_scales), whole(bias)],
        out_specs=pl.BlockSpec((None, ROWS), lambda p, r: (p, r)),
    )(topk_ids, x4, w4, w_scales, bias)
    return out.reshape(tokens, top_k, rows)


def solve(x, w_blocks, w_scales, bias, topk_ids):
    assert w_blocks.shape[1] % ROWS == 0
    j = lambda t: jax.dlpack.from_dlpack(t.contiguous())  # noqa: E731
    return torch.from_dlpack(_expert_gemv(j(x), j(w_blocks), j(w_scales), j(bias), j(topk_ids.to(torch.int32))))
