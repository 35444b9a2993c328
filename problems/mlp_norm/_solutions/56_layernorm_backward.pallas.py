"""JAX Pallas solution for 56_layernorm_backward: rows are seen as 9 chunks of 128 (block shapes must be powers of
two). The first kernel, one program per 4 tokens, recomputes mean and rstd, reduces mean(g) and mean(g * xhat) and
writes grad_x, keeping the statistics; the second gives each program one column chunk and a slice of the tokens
and writes partial sums of grad_out * xhat and grad_out; the third adds the slices into the float32 gradients."""

import jax
import jax.numpy as jnp
import torch
from jax.experimental import pallas as pl

EPS = 1e-6
ROWS = 4
CHUNK = 128
SLICES = 64   # token slices of the weight and bias gradients
ROW_BLOCK = 32


def _input_kernel(x_ref, w_ref, dy_ref, dx_ref, mean_ref, rstd_ref):
    chunks = x_ref.shape[1]
    width = chunks * CHUNK
    zeros = jnp.zeros((ROWS,), jnp.float32)
    x_at = lambda c: x_ref[:, c, :].astype(jnp.float32)  # noqa: E731
    mean = jax.lax.fori_loop(0, chunks, lambda c, t: t + jnp.sum(x_at(c), axis=1), zeros) / width

    def add_squares(c, total):
        centred = x_at(c) - mean[:, None]
        return total + jnp.sum(centred * centred, axis=1)

    rstd = jax.lax.rsqrt(jax.lax.fori_loop(0, chunks, add_squares, zeros) / width + EPS)

    def g_and_xhat(c):
        g = dy_ref[:, c, :].astype(jnp.float32) * w_ref[c, :].astype(jnp.float32)[None, :]
        return g, (x_at(c) - mean[:, None]) * rstd[:, None]

    def add_means(c, totals):
        g, xhat = g_and_xhat(c)
        return totals[0] + jnp.sum(g, axis=1), totals[1] + jnp.sum(g * xhat, axis=1)

    g_sum, gx_sum = jax.lax.fori_loop(0, chunks, add_means, (zeros, zeros))
    g_mean, gx_mean = g_sum / width, gx_sum / width

    def write(c, carry):
        g, xhat = g_and_xhat(c)
        dx_ref[:, c, :] = (rstd[:, None] * (g - g_mean[:, None] - xhat * gx_mean[:, None])).astype(dx_ref.dtype)
        return carry

    jax.lax.fori_loop(0, chunks, write, 0)
    mean_ref[...] = mean
    rstd_ref[...] = rstd


def _partial_kernel(x_ref, dy_ref, mean_ref, rstd_ref, dw_ref, db_ref):
    def body(r, sums):
        rows = pl.ds(r * ROW_BLOCK, ROW_BLOCK)
        dy = dy_ref[rows, :].astype(jnp.float32)
        xhat = (x_ref[rows, :].astype(jnp.float32) - mean_ref[rows][:, None]) * rstd_ref[rows][:, None]
        return sums[0] + jnp.sum(dy * xhat, axis=0), sums[1] + jnp.sum(dy, axis=0)

    zeros = jnp.zeros((CHUNK,), jnp.float32)
    dw, db = jax.lax.fori_loop(0, x_ref.shape[0] // ROW_BLOCK, body, (zeros, zeros))
    dw_ref[...] = dw
    db_ref[...] = db


def _sum_kernel(dw_ref, db_ref, dw_out_ref, db_out_ref):
    dw_out_ref[...] = jnp.sum(dw_ref[...], axis=0)
    db_out_ref[...] = jnp.sum(db_ref[...], axis=0)


@jax.jit
def _layernorm_backward(x, weight, grad_out):
    tokens, width = x.shape
    chunks = width // CHUNK
    x3, dy3 = x.reshape(tokens, chunks, CHUNK), grad_out.reshape(tokens, chunks, CHUNK)
    rows = pl.BlockSpec((ROWS, chunks, CHUNK), lambda i: (i, 0, 0))
    stat = pl.BlockSpec((ROWS,), lambda i: (i,))
    stat_shape = jax.ShapeDtypeStruct((tokens,), jnp.float32)
    grad_x, means, rstds = pl.pallas_call(
        _input_kernel, grid=(tokens // ROWS,),
        out_shape=(jax.ShapeDtypeStruct(x3.shape, x.dtype), stat_shape, stat_shape),
        in_specs=[rows, pl.BlockSpec((chunks, CHUNK), lambda i: (0, 0)), rows], out_specs=(rows, stat, stat),
    )(x3, weight.reshape(chunks, CHUNK), dy3)
    per_slice = tokens // SLICES
    tile = pl.BlockSpec((per_slice, None, CHUNK), lambda s, c: (s, c, 0))
    slice_stat = pl.BlockSpec((per_slice,), lambda s, c: (s,))
    part = pl.BlockSpec((None, None, CHUNK), lambda s, c: (s, c, 0))
    part_shape = jax.ShapeDtypeStruct((SLICES, chunks, CHUNK), jnp.float32)
    dw_parts, db_parts = pl.pallas_call(
        _partial_kernel, grid=(SLICES, chunks), out_shape=(part_shape, part_shape),
        in_specs=[tile, tile, slice_stat, slice_stat], out_specs=(part, part))(x3, dy3, means, rstds)
    whole = pl.BlockSpec((SLICES, None, CHUNK), lambda c: (0, c, 0))
    summed = pl.BlockSpec((None, CHUNK), lambda c: (c, 0))
    sum_shape = jax.ShapeDtypeStruct((chunks, CHUNK), jnp.float32)
    grad_weight, grad_bias = pl.pallas_call(
        _sum_kernel, grid=(chunks,), out_shape=(sum_shape, sum_shape), in_specs=[whole, whole],
        out_specs=(summed, summed))(dw_parts, db_parts)
    return grad_x.reshape(tokens, width), grad_weight.reshape(width), grad_bias.reshape(width)


def solve(x, weight, grad_out):
    tokens, width = x.shape
    assert width % CHUNK == 0 and tokens % (SLICES * ROW_BLOCK) == 0
    j = lambda t: jax.dlpack.from_dlpack(t.contiguous())  # noqa: E731
    return tuple(torch.from_dlpack(t) for t in _layernorm_backward(j(x), j(weight), j(grad_out)))
