"""JAX Pallas solution for 10_sliding_window_softcap_prefill: flash attention with one program per (block of 64 query
tokens, query head) over the key blocks that hold the block's window (the 4096 keys up to each row), with the
tanh soft-cap on the scores, a causal window mask and an online softmax."""


import jax
import jax.numpy as jnp
import torch
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plgpu

BLOCK_Q = 64
BLOCK_K = 32
WINDOW = 4096
SOFTCAP = 50.0
QUERY_SCALE = 256**-0.5

NEG = -1e30


def _params(num_warps):
    make = getattr(plgpu, "CompilerParams", None) or getattr(plgpu, "TritonCompilerParams")
    return make(num_warps=num_warps, num_stages=2)


def _flash(q_ref, k_ref, v_ref, o_ref, row_start, lower, upper, *, scale, window, softcap, block_k):
    block_q = q_ref.shape[0]
    rows = pl.program_id(0) * block_q + jax.lax.broadcasted_iota(jnp.int32, (block_q, 1), 0)
    q = q_ref[...]

    def body(kb, carry):
        top, total, acc = carry
        keys = pl.ds(kb * block_k, block_k)
        scores = jax.lax.dot_general(q, k_ref[keys, :], (((1,), (1,)), ((), ())),
                                     preferred_element_type=jnp.float32) * scale
        if softcap > 0:
            scores = softcap * jnp.tanh(scores / softcap)
        position = kb * block_k + jax.lax.broadcasted_iota(jnp.int32, (1, block_k), 1)
        visible = (position >= row_start) & (position <= rows)
        if window > 0:
            visible = visible & (rows - position < window)
        scores = jnp.where(visible, scores, NEG)
        new_top = jnp.maximum(top, jnp.max(scores, axis=1))
        rescale = jnp.exp(top - new_top)
        weights = jnp.exp(scores - new_top[:, None])
        values = v_ref[keys, :]
        acc = acc * rescale[:, None] + jnp.dot(weights.astype(values.dtype), values,
                                               preferred_element_type=jnp.float32)
        return new_top, total * rescale + jnp.sum(weights, axis=1), acc

    start = (jnp.full((block_q,), NEG, jnp.float32), jnp.zeros((block_q,), jnp.float32),
             jnp.zeros(q_ref.shape, jnp.float32))
    _, total, acc = jax.lax.fori_loop(lower, upper, body, start)
    o_ref[...] = (acc / total[:, None]).astype(o_ref.dtype)


def _kernel(q_ref, k_ref, v_ref, o_ref):
    first_row = pl.program_id(0) * BLOCK_Q
    lowest = jnp.maximum(first_row - WINDOW + 1, 0)
    _flash(q_ref, k_ref, v_ref, o_ref, jnp.zeros((BLOCK_Q, 1), jnp.int32), lowest // BLOCK_K,
           (first_row + BLOCK_Q) // BLOCK_K, scale=QUERY_SCALE, window=WINDOW, softcap=SOFTCAP, block_k=BLOCK_K)


@jax.jit
def _attend(q, k, v):
    seq_len, query_heads, dim = q.shape
    group = query_heads // k.shape[1]
    rows = pl.BlockSpec((BLOCK_Q, None, dim), lambda b, h: (b, h, 0))
    cache = pl.BlockSpec((seq_len, None, dim), lambda b, h: (0, h // group, 0))
    return pl.pallas_call(
        _kernel, out_shape=jax.ShapeDtypeStruct(q.shape, q.dtype), grid=(seq_len // BLOCK_Q, query_heads),
        in_specs=[rows, cache, cache], out_specs=rows, compiler_params=_params(8))(q, k, v)


def solve(q, k, v):
    assert q.shape[0] % BLOCK_Q == 0
    j = lambda t: jax.dlpack.from_dlpack(t.contiguous())  # noqa: E731
    return torch.from_dlpack(_attend(j(q), j(k), j(v)))
