"""JAX Pallas solution for 40_gpt_oss_sink_sliding_window_prefill: one program per (sequence, query head, block of 64
queries) loads the 256 keys that cover the block's windows (clamped into the sequence), takes the scores on the
tensor cores, masks them to the causal 128-key band, and adds the head's sink logit to the softmax denominator only;
the weighted values are a second full-precision dot."""

import functools
import math

import jax
import jax.numpy as jnp
import torch
from jax.experimental import pallas as pl

WINDOW = 128
BLOCK_Q = 64
BLOCK_K = 256


def _kernel(sinks_ref, q_ref, k_ref, v_ref, o_ref, *, scale):
    seq_len = k_ref.shape[0]
    q0 = pl.program_id(2) * BLOCK_Q
    k0 = jnp.minimum(jnp.maximum(q0 - WINDOW, 0), seq_len - BLOCK_K)
    q = q_ref[...]  # [BQ, D]
    keys = k_ref[pl.ds(k0, BLOCK_K), :]
    scores = jax.lax.dot_general(q, keys, (((1,), (1,)), ((), ())), preferred_element_type=jnp.float32) * scale
    i = q0 + jax.lax.broadcasted_iota(jnp.int32, (BLOCK_Q, BLOCK_K), 0)
    j = k0 + jax.lax.broadcasted_iota(jnp.int32, (BLOCK_Q, BLOCK_K), 1)
    visible = (j <= i) & (i - j < WINDOW)
    scores = jnp.where(visible, scores, -jnp.inf)
    sink = sinks_ref[pl.program_id(1)]
    top = jnp.maximum(jnp.max(scores, axis=1), sink)  # [BQ]
    p = jnp.where(visible, jnp.exp(scores - top[:, None]), 0.0)
    denominator = jnp.sum(p, axis=1) + jnp.exp(sink - top)
    values = v_ref[pl.ds(k0, BLOCK_K), :].astype(jnp.float32)
    out = jnp.dot(p, values, precision=jax.lax.Precision.HIGHEST, preferred_element_type=jnp.float32)
    o_ref[...] = (out / denominator[:, None]).astype(o_ref.dtype)


@jax.jit
def _attend(q, k, v, sinks):
    batch, seq_len, heads, dim = q.shape
    group = heads // k.shape[2]
    rows = pl.BlockSpec((None, BLOCK_Q, None, dim), lambda b, h, i: (b, i, h, 0))
    keys = pl.BlockSpec((None, seq_len, None, dim), lambda b, h, i: (b, 0, h // group, 0))
    return pl.pallas_call(
        functools.partial(_kernel, scale=1.0 / math.sqrt(dim)), out_shape=jax.ShapeDtypeStruct(q.shape, q.dtype),
        grid=(batch, heads, seq_len // BLOCK_Q),
        in_specs=[pl.BlockSpec(sinks.shape, lambda b, h, i: (0,)), rows, keys, keys], out_specs=rows,
    )(sinks, q, k, v)


def solve(q, k, v, sinks):
    assert q.shape[1] % BLOCK_Q == 0 and q.shape[1] >= BLOCK_K
    j = lambda t: jax.dlpack.from_dlpack(t.contiguous())  # noqa: E731
    return torch.from_dlpack(_attend(j(q), j(k), j(v), j(sinks.float())))
