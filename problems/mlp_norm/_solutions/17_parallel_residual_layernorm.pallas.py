"""JAX Pallas solution for 17_parallel_residual_layernorm: one program per block of 4 tokens walks the 4544-wide rows
as 71 chunks of 64 (block shapes must be powers of two): a first pass writes the float32-summed residual and sums it,
a second sums the centred squares, a third writes the LayerNorm output with weight and bias."""

import jax
import jax.numpy as jnp
import torch
from jax.experimental import pallas as pl

EPS = 1e-5
ROWS = 4
CHUNK = 64


def _kernel(attention_ref, mlp_ref, residual_ref, weight_ref, bias_ref, normed_ref, summed_ref):
    chunks = residual_ref.shape[1]
    width = chunks * CHUNK

    def summed_chunk(c):
        return (residual_ref[:, c, :].astype(jnp.float32) + attention_ref[:, c, :].astype(jnp.float32)
                + mlp_ref[:, c, :].astype(jnp.float32))  # [ROWS, CHUNK]

    def add_up(c, total):
        value = summed_chunk(c)
        summed_ref[:, c, :] = value.astype(summed_ref.dtype)
        return total + jnp.sum(value, axis=1)

    mean = jax.lax.fori_loop(0, chunks, add_up, jnp.zeros((ROWS,), jnp.float32)) / width

    def add_squares(c, total):
        centred = summed_chunk(c) - mean[:, None]
        return total + jnp.sum(centred * centred, axis=1)

    variance = jax.lax.fori_loop(0, chunks, add_squares, jnp.zeros((ROWS,), jnp.float32)) / width
    inverse_std = jax.lax.rsqrt(variance + EPS)

    def write(c, carry):
        weight = weight_ref[c, :].astype(jnp.float32)[None, :]
        bias = bias_ref[c, :].astype(jnp.float32)[None, :]
        normed = (summed_chunk(c) - mean[:, None]) * inverse_std[:, None] * weight + bias
        normed_ref[:, c, :] = normed.astype(normed_ref.dtype)
        return carry

    jax.lax.fori_loop(0, chunks, write, 0)


@jax.jit
def _residual_layernorm(attention_out, mlp_out, residual, weight, bias):
    tokens, width = residual.shape
    chunks = width // CHUNK
    as_chunks = lambda a: a.reshape(tokens, chunks, CHUNK)  # noqa: E731
    rows = pl.BlockSpec((ROWS, chunks, CHUNK), lambda i: (i, 0, 0))
    vector = pl.BlockSpec((chunks, CHUNK), lambda i: (0, 0))
    out = jax.ShapeDtypeStruct((tokens, chunks, CHUNK), residual.dtype)
    normed, summed = pl.pallas_call(
        _kernel, out_shape=(out, out), grid=(tokens // ROWS,), in_specs=[rows, rows, rows, vector, vector],
        out_specs=(rows, rows))(as_chunks(attention_out), as_chunks(mlp_out), as_chunks(residual),
                                weight.reshape(chunks, CHUNK), bias.reshape(chunks, CHUNK))
    return normed.reshape(tokens, width), summed.reshape(tokens, width)


def solve(attention_out, mlp_out, residual, weight, bias):
    assert residual.shape[1] % CHUNK == 0 and residual.shape[0] % ROWS == 0
    j = lambda t: jax.dlpack.from_dlpack(t.contiguous())  # noqa: E731
    normed, summed = _residual_layernorm(j(attention_out), j(mlp_out), j(residual), j(weight), j(bias))
    return torch.from_dlpack(normed), torch.from_dlpack(summed)
