"""JAX Pallas solution for 32_gated_linear_attention: the recurrence itself, one program per (sequence, head) carrying
the 128 x 128 float32 state through the steps in a fori_loop: each step decays the state per key channel by
exp(logsigmoid(gk) / 16), adds k v^T and reads out q^T S."""

import jax
import jax.numpy as jnp
import torch
from jax.experimental import pallas as pl

GATE_NORMALIZER = 16.0


def _kernel(q_ref, k_ref, v_ref, g_ref, o_ref):
    key_dim = q_ref.shape[1]
    scale = key_dim ** -0.5

    def step(t, state):
        g = g_ref[t, :].astype(jnp.float32)
        alpha = jnp.exp((jnp.minimum(g, 0.0) - jnp.log1p(jnp.exp(-jnp.abs(g)))) / GATE_NORMALIZER)  # [K]
        k = k_ref[t, :].astype(jnp.float32)
        v = v_ref[t, :].astype(jnp.float32)
        state = state * alpha[:, None] + k[:, None] * v[None, :]
        q = q_ref[t, :].astype(jnp.float32) * scale
        o_ref[t, :] = jnp.sum(state * q[:, None], axis=0).astype(o_ref.dtype)
        return state

    jax.lax.fori_loop(0, q_ref.shape[0], step, jnp.zeros((key_dim, v_ref.shape[1]), jnp.float32))


@jax.jit
def _recurrence(q, k, v, gk):
    batch, seq_len, heads, key_dim = q.shape
    value_dim = v.shape[3]
    keys = pl.BlockSpec((None, seq_len, None, key_dim), lambda b, h: (b, 0, h, 0))
    values = pl.BlockSpec((None, seq_len, None, value_dim), lambda b, h: (b, 0, h, 0))
    return pl.pallas_call(_kernel, out_shape=jax.ShapeDtypeStruct(v.shape, v.dtype), grid=(batch, heads),
                          in_specs=[keys, keys, values, keys], out_specs=values)(q, k, v, gk)


def solve(q, k, v, gk):
    j = lambda t: jax.dlpack.from_dlpack(t.contiguous())  # noqa: E731
    return torch.from_dlpack(_recurrence(j(q), j(k), j(v), j(gk)))
