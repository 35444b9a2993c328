"""JAX Pallas solution for 62_moe_combine_backward: rows are seen as 7 chunks of 1024 (block shapes must be powers of
two). One program per token writes weight * grad_out into the row of each of its expert copies (positions is a
permutation, so every row of the expert gradient is written once) and reduces grad_out . expert_output for each
routing-weight gradient."""

import jax
import jax.numpy as jnp
import torch
from jax.experimental import pallas as pl

CHUNK = 1024


def _kernel(pos_ref, w_ref, dy_ref, e_ref, ge_ref, gw_ref):
    token = pl.program_id(0)
    top_k = pos_ref.shape[1]
    chunks = dy_ref.shape[0]
    slot = jax.lax.broadcasted_iota(jnp.int32, (top_k,), 0)
    grad_weights = jnp.zeros((top_k,), jnp.float32)
    for k in range(top_k):
        row = pos_ref[token, k]
        weight = w_ref[token, k]

        def chunk(c, dot):
            dy = dy_ref[c, :].astype(jnp.float32)
            ge_ref[row, c, :] = (weight * dy).astype(ge_ref.dtype)
            return dot + jnp.sum(dy * e_ref[row, c, :].astype(jnp.float32))

        dot = jax.lax.fori_loop(0, chunks, chunk, jnp.float32(0.0))
        grad_weights = jnp.where(slot == k, dot, grad_weights)
    gw_ref[...] = grad_weights


@jax.jit
def _combine_backward(positions, weights, grad_out, expert_outputs):
    tokens, top_k = positions.shape
    hidden = grad_out.shape[1]
    chunks = hidden // CHUNK
    experts3 = expert_outputs.reshape(expert_outputs.shape[0], chunks, CHUNK)
    whole = lambda a: pl.BlockSpec(a.shape, lambda t: (0,) * a.ndim)  # noqa: E731
    grad_expert, grad_weights = pl.pallas_call(
        _kernel, grid=(tokens,),
        out_shape=(jax.ShapeDtypeStruct(experts3.shape, expert_outputs.dtype),
                   jax.ShapeDtypeStruct((tokens, top_k), jnp.float32)),
        in_specs=[whole(positions), whole(weights), pl.BlockSpec((None, chunks, CHUNK), lambda t: (t, 0, 0)),
                  whole(experts3)],
        out_specs=(whole(experts3), pl.BlockSpec((None, top_k), lambda t: (t, 0))),
    )(positions, weights, grad_out.reshape(tokens, chunks, CHUNK), experts3)
    return grad_expert.reshape(expert_outputs.shape), grad_weights


def solve(grad_out, expert_outputs, routing_weights, positions):
    assert grad_out.shape[1] % CHUNK == 0
    j = lambda t: jax.dlpack.from_dlpack(t.contiguous())  # noqa: E731
    grad_expert, grad_weights = _combine_backward(j(positions.to(torch.int32)), j(routing_weights.float()),
                                                  j(grad_out), j(expert_outputs))
    return torch.from_dlpack(grad_expert), torch.from_dlpack(grad_weights)
