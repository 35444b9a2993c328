"""JAX Pallas solution for 36_gated_delta_decode_step: one program per (sequence, value head) L2-normalises its key
head's q and k, takes the head's decay and beta, recalls k^T S from the decayed 128 x 128 state, writes the
delta-rule update and reads it out with q."""

import jax
import jax.numpy as jnp
import torch
from jax.experimental import pallas as pl

NORM_EPS = 1e-6


def _kernel(q_ref, k_ref, v_ref, a_ref, b_ref, alog_ref, bias_ref, s_ref, out_ref, o_ref):
    batch, head = pl.program_id(0), pl.program_id(1)
    q = q_ref[...].astype(jnp.float32)  # [K]
    k = k_ref[...].astype(jnp.float32)
    q = q / jnp.sqrt(jnp.sum(q * q) + NORM_EPS) * (q.shape[0] ** -0.5)
    k = k / jnp.sqrt(jnp.sum(k * k) + NORM_EPS)
    raw = a_ref[batch, head].astype(jnp.float32) + bias_ref[head]
    softplus = jnp.where(raw > 20.0, raw, jnp.log1p(jnp.exp(raw)))
    decay = jnp.exp(-jnp.exp(alog_ref[head]) * softplus)
    beta = 1.0 / (1.0 + jnp.exp(-b_ref[batch, head].astype(jnp.float32)))
    s = s_ref[...].astype(jnp.float32) * decay  # [K, V]
    recalled = jnp.sum(s * k[:, None], axis=0)  # [V]
    delta = (v_ref[...].astype(jnp.float32) - recalled) * beta
    s = s + k[:, None] * delta[None, :]
    o_ref[...] = s.astype(o_ref.dtype)
    out_ref[...] = jnp.sum(s * q[:, None], axis=0).astype(out_ref.dtype)


@jax.jit
def _decode_step(q, k, v, a, b, a_log, dt_bias, state):
    batch, value_heads, value_dim = v.shape
    key_heads, key_dim = q.shape[1], q.shape[2]
    group = value_heads // key_heads
    whole = lambda t: pl.BlockSpec(t.shape, lambda i, h: (0,) * t.ndim)  # noqa: E731
    key = pl.BlockSpec((None, None, key_dim), lambda i, h: (i, h // group, 0))
    val = pl.BlockSpec((None, None, value_dim), lambda i, h: (i, h, 0))
    mat = pl.BlockSpec((None, None, key_dim, value_dim), lambda i, h: (i, h, 0, 0))
    return pl.pallas_call(
        _kernel, grid=(batch, value_heads),
        out_shape=(jax.ShapeDtypeStruct(v.shape, v.dtype), jax.ShapeDtypeStruct(state.shape, state.dtype)),
        in_specs=[key, key, val, whole(a), whole(b), whole(a_log), whole(dt_bias), mat], out_specs=(val, mat),
    )(q, k, v, a, b, a_log, dt_bias, state)


def solve(q, k, v, a, b, a_log, dt_bias, state):
    j = lambda t: jax.dlpack.from_dlpack(t.contiguous())  # noqa: E731
    out, new_state = _decode_step(j(q), j(k), j(v), j(a), j(b), j(a_log.float()), j(dt_bias.float()), j(state))
    return torch.from_dlpack(out), torch.from_dlpack(new_state)
