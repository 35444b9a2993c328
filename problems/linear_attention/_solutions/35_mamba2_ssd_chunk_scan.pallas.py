"""JAX Pallas solution for 35_mamba2_ssd_chunk_scan: the chunked SSD computes the same sequence as the Mamba-2
recurrence state_t = exp(dt_t a) state_{t-1} + dt_t x_t b_t^T, y_t = state_t c_t + D x_t, so one program per
(sequence, head) carries the 64 x 128 float32 state through the steps in a fori_loop."""

import jax
import jax.numpy as jnp
import torch
from jax.experimental import pallas as pl


def _kernel(x_ref, dt_ref, a_ref, b_ref, c_ref, d_ref, bias_ref, o_ref):
    head = pl.program_id(1)
    rate, skip, bias = a_ref[head], d_ref[head], bias_ref[head]

    def step(t, state):
        raw = dt_ref[t].astype(jnp.float32) + bias
        dt = jnp.where(raw > 20.0, raw, jnp.log1p(jnp.exp(raw)))
        x = x_ref[t, :].astype(jnp.float32)  # [P]
        b = b_ref[t, :].astype(jnp.float32)  # [N]
        state = state * jnp.exp(dt * rate) + (dt * x)[:, None] * b[None, :]
        y = jnp.sum(state * c_ref[t, :].astype(jnp.float32)[None, :], axis=1) + x * skip
        o_ref[t, :] = y.astype(o_ref.dtype)
        return state

    jax.lax.fori_loop(0, x_ref.shape[0], step, jnp.zeros((x_ref.shape[1], b_ref.shape[1]), jnp.float32))


@jax.jit
def _ssd(x, dt_raw, a, b, c, d, dt_bias):
    batch, seq_len, heads, head_dim = x.shape
    states = b.shape[2]
    whole = lambda t: pl.BlockSpec(t.shape, lambda i, h: (0,) * t.ndim)  # noqa: E731
    rows = pl.BlockSpec((None, seq_len, None, head_dim), lambda i, h: (i, 0, h, 0))
    shared = pl.BlockSpec((None, seq_len, states), lambda i, h: (i, 0, 0))
    return pl.pallas_call(
        _kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), grid=(batch, heads),
        in_specs=[rows, pl.BlockSpec((None, seq_len, None), lambda i, h: (i, 0, h)), whole(a), shared, shared,
                  whole(d), whole(dt_bias)],
        out_specs=rows)(x, dt_raw, a, b, c, d, dt_bias)


def solve(x, dt_raw, a, b, c, d, dt_bias):
    j = lambda t: jax.dlpack.from_dlpack(t.contiguous())  # noqa: E731
    return torch.from_dlpack(_ssd(j(x), j(dt_raw), j(a), j(b), j(c), j(d), j(dt_bias.float())))
