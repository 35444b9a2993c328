"""JAX Pallas solution for 55_rmsnorm_backward: rows are seen as 8 chunks of 1024. The first kernel, one program per
2 tokens, recomputes r = rsqrt(mean(x^2) + eps), reduces mean(g * xhat) and writes grad_x, keeping r; the second
gives each program one column chunk and a slice of the tokens and writes partial sums of grad_out * xhat; the third
adds the slices into the float32 weight gradient."""

import jax
import jax.numpy as jnp
import torch
from jax.experimental import pallas as pl

EPS = 1e-5
ROWS = 2
CHUNK = 1024
SLICES = 32   # token slices of the weight gradient
ROW_BLOCK = 16


def _input_kernel(x_ref, w_ref, dy_ref, dx_ref, r_ref):
    chunks = x_ref.shape[1]
    width = chunks * CHUNK
    zeros = jnp.zeros((ROWS,), jnp.float32)
    x_at = lambda c: x_ref[:, c, :].astype(jnp.float32)  # noqa: E731
    squares = jax.lax.fori_loop(0, chunks, lambda c, t: t + jnp.sum(x_at(c) * x_at(c), axis=1), zeros)
    r = jax.lax.rsqrt(squares / width + EPS)

    def g_and_xhat(c):
        g = dy_ref[:, c, :].astype(jnp.float32) * w_ref[c, :].astype(jnp.float32)[None, :]
        return g, x_at(c) * r[:, None]

    def add_mean(c, total):
        g, xhat = g_and_xhat(c)
        return total + jnp.sum(g * xhat, axis=1)

    gx_mean = jax.lax.fori_loop(0, chunks, add_mean, zeros) / width

    def write(c, carry):
        g, xhat = g_and_xhat(c)
        dx_ref[:, c, :] = (r[:, None] * (g - xhat * gx_mean[:, None])).astype(dx_ref.dtype)
        return carry

    jax.lax.fori_loop(0, chunks, write, 0)
    r_ref[...] = r


def _partial_kernel(x_ref, dy_ref, r_ref, dw_ref):
    def body(i, total):
        rows = pl.ds(i * ROW_BLOCK, ROW_BLOCK)
        xhat = x_ref[rows, :].astype(jnp.float32) * r_ref[rows][:, None]
        return total + jnp.sum(dy_ref[rows, :].astype(jnp.float32) * xhat, axis=0)

    dw_ref[...] = jax.lax.fori_loop(0, x_ref.shape[0] // ROW_BLOCK, body, jnp.zeros((CHUNK,), jnp.float32))


def _sum_kernel(dw_ref, dw_out_ref):
    dw_out_ref[...] = jnp.sum(dw_ref[...], axis=0)


@jax.jit
def _rmsnorm_backward(x, weight, grad_out):
    tokens, width = x.shape
    chunks = width // CHUNK
    x3, dy3 = x.reshape(tokens, chunks, CHUNK), grad_out.reshape(tokens, chunks, CHUNK)
    rows = pl.BlockSpec((ROWS, chunks, CHUNK), lambda i: (i, 0, 0))
    grad_x, inverse_rms = pl.pallas_call(
        _input_kernel, grid=(tokens // ROWS,),
        out_shape=(jax.ShapeDtypeStruct(x3.shape, x.dtype), jax.ShapeDtypeStruct((tokens,), jnp.float32)),
        in_specs=[rows, pl.BlockSpec((chunks, CHUNK), lambda i: (0, 0)), rows],
        out_specs=(rows, pl.BlockSpec((ROWS,), lambda i: (i,))),
    )(x3, weight.reshape(chunks, CHUNK), dy3)
    per_slice = tokens // SLICES
    tile = pl.BlockSpec((per_slice, None, CHUNK), lambda s, c: (s, c, 0))
    parts = pl.pallas_call(
        _partial_kernel, grid=(SLICES, chunks), out_shape=jax.ShapeDtypeStruct((SLICES, chunks, CHUNK), jnp.float32),
        in_specs=[tile, tile, pl.BlockSpec((per_slice,), lambda s, c: (s,))],
        out_specs=pl.BlockSpec((None, None, CHUNK), lambda s, c: (s, c, 0)))(x3, dy3, inverse_rms)
    grad_weight = pl.pallas_call(
        _sum_kernel, grid=(chunks,), out_shape=jax.ShapeDtypeStruct((chunks, CHUNK), jnp.float32),
        in_specs=[pl.BlockSpec((SLICES, None, CHUNK), lambda c: (0, c, 0))],
        out_specs=pl.BlockSpec((None, CHUNK), lambda c: (c, 0)))(parts)
    return grad_x.reshape(tokens, width), grad_weight.reshape(width)


def solve(x, weight, grad_out):
    tokens, width = x.shape
    assert width % CHUNK == 0 and tokens % (SLICES * ROW_BLOCK) == 0
    j = lambda t: jax.dlpack.from_dlpack(t.contiguous())  # noqa: E731
    grad_x, grad_weight = _rmsnorm_backward(j(x), j(weight), j(grad_out))
    return torch.from_dlpack(grad_x), torch.from_dlpack(grad_weight)
