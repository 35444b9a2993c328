"""JAX Pallas solution for 33_gated_delta_rule: the recurrence itself, one program per (sequence, value head)
carrying the 128 x 128 float32 state through the steps in a fori_loop: each step L2-normalises its key head's q and
k, decays the state, recalls k^T S, applies the delta-rule update with beta and reads out q^T S; the last state is
written at the end."""

import jax
import jax.numpy as jnp
import torch
from jax.experimental import pallas as pl

NORM_EPS = 1e-6


def _kernel(q_ref, k_ref, v_ref, a_ref, b_ref, alog_ref, bias_ref, o_ref, s_ref):
    head = pl.program_id(1)
    key_dim = q_ref.shape[1]
    a_scale = jnp.exp(alog_ref[head])
    bias = bias_ref[head]

    def step(t, state):
        q = q_ref[t, :].astype(jnp.float32)
        k = k_ref[t, :].astype(jnp.float32)
        q = q / jnp.sqrt(jnp.sum(q * q) + NORM_EPS) * (key_dim ** -0.5)
        k = k / jnp.sqrt(jnp.sum(k * k) + NORM_EPS)
        raw = a_ref[t].astype(jnp.float32) + bias
        decay = jnp.exp(-a_scale * jnp.where(raw > 20.0, raw, jnp.log1p(jnp.exp(raw))))
        beta = 1.0 / (1.0 + jnp.exp(-b_ref[t].astype(jnp.float32)))
        state = state * decay
        recalled = jnp.sum(state * k[:, None], axis=0)  # [V]
        delta = (v_ref[t, :].astype(jnp.float32) - recalled) * beta
        state = state + k[:, None] * delta[None, :]
        o_ref[t, :] = jnp.sum(state * q[:, None], axis=0).astype(o_ref.dtype)
        return state

    state = jax.lax.fori_loop(0, q_ref.shape[0], step, jnp.zeros((key_dim, v_ref.shape[1]), jnp.float32))
    s_ref[...] = state.astype(s_ref.dtype)


@jax.jit
def _recurrence(q, k, v, a, b, a_log, dt_bias):
    batch, seq_len, key_heads, key_dim = q.shape
    value_heads, value_dim = v.shape[2], v.shape[3]
    group = value_heads // key_heads
    whole = lambda t: pl.BlockSpec(t.shape, lambda i, h: (0,) * t.ndim)  # noqa: E731
    keys = pl.BlockSpec((None, seq_len, None, key_dim), lambda i, h: (i, 0, h // group, 0))
    values = pl.BlockSpec((None, seq_len, None, value_dim), lambda i, h: (i, 0, h, 0))
    gates = pl.BlockSpec((None, seq_len, None), lambda i, h: (i, 0, h))
    return pl.pallas_call(
        _kernel, grid=(batch, value_heads),
        out_shape=(jax.ShapeDtypeStruct(v.shape, v.dtype),
                   jax.ShapeDtypeStruct((batch, value_heads, key_dim, value_dim), v.dtype)),
        in_specs=[keys, keys, values, gates, gates, whole(a_log), whole(dt_bias)],
        out_specs=(values, pl.BlockSpec((None, None, key_dim, value_dim), lambda i, h: (i, h, 0, 0))),
    )(q, k, v, a, b, a_log, dt_bias)


def solve(q, k, v, a, b, a_log, dt_bias):
    j = lambda t: jax.dlpack.from_dlpack(t.contiguous())  # noqa: E731
    out, state = _recurrence(j(q), j(k), j(v), j(a), j(b), j(a_log.float()), j(dt_bias.float()))
    return torch.from_dlpack(out), torch.from_dlpack(state)
