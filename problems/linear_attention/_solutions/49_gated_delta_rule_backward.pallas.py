"""JAX Pallas solution for 49_gated_delta_rule_backward: per (sequence, head, 64 value columns), a first kernel runs
the recurrence forward and writes every state S_t of its [128, 64] slice to a float32 output; a second walks back
through time with G = dL/dS_t carried in a fori_loop, reading S_t and S_{t-1} back. dv is complete per slice; dq,
dk, dg and dbeta are sums over the value dims, so each slice writes its share to its own float32 partial and a last
kernel adds the two shares in a fixed order and casts them to the output dtypes."""

import jax
import jax.numpy as jnp
import torch
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plgpu

BLOCK_V = 64
SUM_BLOCK = 4096


def _params(num_warps):
    make = getattr(plgpu, "CompilerParams", None) or getattr(plgpu, "TritonCompilerParams")
    return make(num_warps=num_warps, num_stages=1)


def _forward_kernel(k_ref, v_ref, g_ref, beta_ref, states_ref):
    def step(t, state):
        k = k_ref[t, :].astype(jnp.float32)
        v = v_ref[t, :].astype(jnp.float32)
        a = jnp.exp(g_ref[t])
        beta = beta_ref[t].astype(jnp.float32)
        recalled = jnp.sum(k[:, None] * state, axis=0)
        state = a * state + k[:, None] * (beta * (v - a * recalled))[None, :]
        states_ref[t, :, :] = state
        return state

    jax.lax.fori_loop(0, k_ref.shape[0], step, jnp.zeros((k_ref.shape[1], v_ref.shape[1]), jnp.float32))


def _backward_kernel(q_ref, k_ref, v_ref, g_ref, beta_ref, do_ref, states_ref, dq_ref, dk_ref, dv_ref, dg_ref,
                     dbeta_ref):
    seq_len, key_dim = q_ref.shape
    scale = key_dim**-0.5
    steps = jax.lax.broadcasted_iota(jnp.int32, (seq_len,), 0)

    def step(i, carry):
        grad, dg, dbeta = carry
        t = seq_len - 1 - i
        q = q_ref[t, :].astype(jnp.float32)
        k = k_ref[t, :].astype(jnp.float32)
        v = v_ref[t, :].astype(jnp.float32)
        do = do_ref[t, :].astype(jnp.float32)
        a = jnp.exp(g_ref[t])
        beta = beta_ref[t].astype(jnp.float32)
        current = states_ref[t, :, :]
        prev = jnp.where(t > 0, states_ref[jnp.maximum(t - 1, 0), :, :], 0.0)
        grad = grad + scale * q[:, None] * do[None, :]
        dq_ref[t, :] = scale * jnp.sum(current * do[None, :], axis=1)
        k_prev = jnp.sum(k[:, None] * prev, axis=0)
        u = v - a * k_prev
        k_grad = jnp.sum(k[:, None] * grad, axis=0)
        r = beta * k_grad
        dv_ref[t, :] = r.astype(dv_ref.dtype)
        dk_ref[t, :] = beta * jnp.sum(grad * u[None, :], axis=1) - a * jnp.sum(prev * r[None, :], axis=1)
        dbeta = jnp.where(steps == t, jnp.sum(k_grad * u), dbeta)
        # dg = a (<G, S_{t-1}> - r . (k S_{t-1})) = a <G - k^T r, S_{t-1}>: one sum over the matrix that also carries
        # G back, instead of the difference of two large sums (that difference cancels in float32).
        kept = grad - k[:, None] * r[None, :]
        dg = jnp.where(steps == t, a * jnp.sum(kept * prev), dg)
        return a * kept, dg, dbeta

    zeros = jnp.zeros((seq_len,), jnp.float32)
    start = (jnp.zeros((key_dim, v_ref.shape[1]), jnp.float32), zeros, zeros)
    _, dg, dbeta = jax.lax.fori_loop(0, seq_len, step, start)
    dg_ref[...] = dg
    dbeta_ref[...] = dbeta


def _sum_kernel(parts_ref, o_ref):
    total = parts_ref[0, :]
    for part in range(1, parts_ref.shape[0]):
        total = total + parts_ref[part, :]
    o_ref[...] = total.astype(o_ref.dtype)


def _summed(parts, shape, dtype):
    flat = parts.reshape(parts.shape[0], -1)
    size = flat.shape[1]
    out = pl.pallas_call(
        _sum_kernel, out_shape=jax.ShapeDtypeStruct((size,), dtype), grid=(size // SUM_BLOCK,),
        in_specs=[pl.BlockSpec((flat.shape[0], SUM_BLOCK), lambda i: (0, i))],
        out_specs=pl.BlockSpec((SUM_BLOCK,), lambda i: (i,)))(flat)
    return out.reshape(shape)


@jax.jit
def _backward(q, k, v, g, beta, dout):
    batch, seq_len, heads, key_dim = q.shape
    value_dim = v.shape[3]
    blocks = value_dim // BLOCK_V
    grid = (batch, heads, blocks)
    keys = pl.BlockSpec((None, seq_len, None, key_dim), lambda b, h, c: (b, 0, h, 0))
    values = pl.BlockSpec((None, seq_len, None, BLOCK_V), lambda b, h, c: (b, 0, h, c))
    gates = pl.BlockSpec((None, seq_len, None), lambda b, h, c: (b, 0, h))
    states_shape = jax.ShapeDtypeStruct((batch, heads, blocks, seq_len, key_dim, BLOCK_V), jnp.float32)
    states_spec = pl.BlockSpec((None, None, None, seq_len, key_dim, BLOCK_V), lambda b, h, c: (b, h, c, 0, 0, 0))
    states = pl.pallas_call(
        _forward_kernel, out_shape=states_shape, grid=grid, in_specs=[keys, values, gates, gates],
        out_specs=states_spec, compiler_params=_params(8))(k, v, g, beta)

    key_parts = jax.ShapeDtypeStruct((blocks,) + q.shape, jnp.float32)
    gate_parts = jax.ShapeDtypeStruct((blocks,) + g.shape, jnp.float32)
    key_part = pl.BlockSpec((None, None, seq_len, None, key_dim), lambda b, h, c: (c, b, 0, h, 0))
    gate_part = pl.BlockSpec((None, None, seq_len, None), lambda b, h, c: (c, b, 0, h))
    dq, dk, dv, dg, dbeta = pl.pallas_call(
        _backward_kernel, grid=grid,
        out_shape=(key_parts, key_parts, jax.ShapeDtypeStruct(v.shape, dout.dtype), gate_parts, gate_parts),
        in_specs=[keys, keys, values, gates, gates, values, states_spec],
        out_specs=(key_part, key_part, values, gate_part, gate_part), compiler_params=_params(8))(
            q, k, v, g, beta, dout, states)
    return (_summed(dq, q.shape, dout.dtype), _summed(dk, k.shape, dout.dtype), dv, _summed(dg, g.shape, g.dtype),
            _summed(dbeta, beta.shape, beta.dtype))


def solve(q, k, v, g, beta, dout):
    assert v.shape[3] % BLOCK_V == 0 and g.numel() % SUM_BLOCK == 0
    j = lambda t: jax.dlpack.from_dlpack(t.contiguous())  # noqa: E731
    grads = _backward(j(q), j(k), j(v), j(g.float()), j(beta), j(dout))
    return tuple(torch.from_dlpack(grad) for grad in grads)
