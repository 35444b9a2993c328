"""JAX Pallas solution for 08_varlen_causal_gqa_prefill: flash attention with one program per (block of 64 query
tokens, query head); each row finds its prompt's start in cu_seqlens, and the program walks only the key blocks
from the block's earliest prompt start to its last row, with a causal, same-prompt mask and an online softmax."""

import functools
import math

import jax
import jax.numpy as jnp
import torch
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plgpu

BLOCK_Q = 64
BLOCK_K = 64
BOUNDS = 16  # cu_seqlens padded to a power of two with the total (a start no row reaches)

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


def _kernel(cu_ref, q_ref, k_ref, v_ref, o_ref, *, scale):
    first_row = pl.program_id(0) * BLOCK_Q
    rows = first_row + jax.lax.broadcasted_iota(jnp.int32, (BLOCK_Q, 1), 0)
    row_start = jnp.zeros((BLOCK_Q, 1), jnp.int32)
    block_start = jnp.int32(0)
    for i in range(BOUNDS):
        bound = cu_ref[i]
        row_start = jnp.where(bound <= rows, bound, row_start)
        block_start = jnp.where(bound <= first_row, bound, block_start)
    _flash(q_ref, k_ref, v_ref, o_ref, row_start, block_start // BLOCK_K, (first_row + BLOCK_Q) // BLOCK_K,
           scale=scale, window=0, softcap=0.0, block_k=BLOCK_K)


@jax.jit
def _attend(q, k, v, cu_seqlens):
    total, query_heads, dim = q.shape
    group = query_heads // k.shape[1]
    rows = pl.BlockSpec((BLOCK_Q, None, dim), lambda b, h: (b, h, 0))
    cache = pl.BlockSpec((total, None, dim), lambda b, h: (0, h // group, 0))
    return pl.pallas_call(
        functools.partial(_kernel, scale=1.0 / math.sqrt(dim)), out_shape=jax.ShapeDtypeStruct(q.shape, q.dtype),
        grid=(total // BLOCK_Q, query_heads),
        in_specs=[pl.BlockSpec((BOUNDS,), lambda b, h: (0,)), rows, cache, cache], out_specs=rows,
        compiler_params=_params(4))(cu_seqlens, q, k, v)


def solve(q, k, v, cu_seqlens):
    total = q.shape[0]
    assert total % BLOCK_Q == 0 and cu_seqlens.shape[0] <= BOUNDS
    padding = torch.full((BOUNDS - cu_seqlens.shape[0],), total, device=q.device, dtype=torch.int32)
    bounds = torch.cat([cu_seqlens.to(torch.int32), padding])
    j = lambda t: jax.dlpack.from_dlpack(t.contiguous())  # noqa: E731
    return torch.from_dlpack(_attend(j(q), j(k), j(v), j(bounds)))
