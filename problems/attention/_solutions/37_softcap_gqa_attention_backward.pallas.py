"""JAX Pallas solution for 37_softcap_gqa_attention_backward: FlashAttention-2-style backward with the softcap folded
in, in three kernels. One program per (sequence, 32 query rows, query head) computes delta = rowsum(do * o). One
program per (sequence, KV head, 32 keys) walks both query heads of its group and every causal query tile,
recomputing the capped logits c = 50 tanh(q k^T / 800) and p = exp(c - lse), and accumulates dv += p^T do and
dk += ds^T q with ds = p (do v^T - delta) (1 - (c / 50)^2); the sum over the group happens in the accumulators. One
program per (sequence, query head, 32 queries) walks the causal key tiles and accumulates dq += ds k. The dots take
bf16 tiles with float32 accumulation; head dim 256 is held whole."""

import jax
import jax.numpy as jnp
import torch
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plgpu

BLOCK_M = 32  # query rows per tile
BLOCK_N = 32  # key rows per tile
SOFTCAP = 50.0
SCALE = 256**-0.5

_NT = (((1,), (1,)), ((), ()))  # a @ b^T
_TN = (((0,), (0,)), ((), ()))  # a^T @ b


def _params(num_warps, num_stages):
    make = getattr(plgpu, "CompilerParams", None) or getattr(plgpu, "TritonCompilerParams")
    return make(num_warps=num_warps, num_stages=num_stages)


def _dot(a, b, dims=(((1,), (0,)), ((), ()))):
    return jax.lax.dot_general(a, b, dims, preferred_element_type=jnp.float32)


def _delta_kernel(o_ref, do_ref, delta_ref):
    delta_ref[...] = jnp.sum(o_ref[...].astype(jnp.float32) * do_ref[...].astype(jnp.float32), axis=1)


def _tile_grads(q, k, v, do, lse, delta, rows, cols):
    """The probabilities p and the logit gradients ds of a [BLOCK_M, BLOCK_N] tile (0 above the diagonal)."""
    capped = SOFTCAP * jnp.tanh(_dot(q, k, _NT) * (SCALE / SOFTCAP))
    p = jnp.where(cols <= rows, jnp.exp(capped - lse[:, None]), 0.0)
    ratio = capped / SOFTCAP
    ds = p * (_dot(do, v, _NT) - delta[:, None]) * (1.0 - ratio * ratio)
    return p, ds


def _dkdv_kernel(q_ref, k_ref, v_ref, do_ref, lse_ref, delta_ref, dk_ref, dv_ref):
    start_n = pl.program_id(2) * BLOCK_N
    k = k_ref[...]  # [BLOCK_N, D]
    v = v_ref[...]
    cols = start_n + jax.lax.broadcasted_iota(jnp.int32, (1, BLOCK_N), 1)
    zeros = jnp.zeros(k.shape, jnp.float32)
    dk, dv = zeros, zeros
    for g in range(q_ref.shape[1]):
        def body(m, carry, g=g):
            dk, dv = carry
            tile = pl.ds(m * BLOCK_M, BLOCK_M)
            q = q_ref[tile, g, :]
            do = do_ref[tile, g, :]
            rows = m * BLOCK_M + jax.lax.broadcasted_iota(jnp.int32, (BLOCK_M, 1), 0)
            p, ds = _tile_grads(q, k, v, do, lse_ref[g, tile], delta_ref[g, tile], rows, cols)
            return dk + _dot(ds.astype(q.dtype), q, _TN), dv + _dot(p.astype(do.dtype), do, _TN)

        dk, dv = jax.lax.fori_loop(start_n // BLOCK_M, q_ref.shape[0] // BLOCK_M, body, (dk, dv))
    dk_ref[...] = (dk * SCALE).astype(dk_ref.dtype)
    dv_ref[...] = dv.astype(dv_ref.dtype)


def _dq_kernel(q_ref, k_ref, v_ref, do_ref, lse_ref, delta_ref, dq_ref):
    start_m = pl.program_id(2) * BLOCK_M
    q = q_ref[...]
    do = do_ref[...]
    lse = lse_ref[...]
    delta = delta_ref[...]
    rows = start_m + jax.lax.broadcasted_iota(jnp.int32, (BLOCK_M, 1), 0)

    def body(n, dq):
        tile = pl.ds(n * BLOCK_N, BLOCK_N)
        k = k_ref[tile, :]
        cols = n * BLOCK_N + jax.lax.broadcasted_iota(jnp.int32, (1, BLOCK_N), 1)
        _, ds = _tile_grads(q, k, v_ref[tile, :], do, lse, delta, rows, cols)
        return dq + _dot(ds.astype(k.dtype), k)

    dq = jax.lax.fori_loop(0, (start_m + BLOCK_M) // BLOCK_N, body, jnp.zeros(q.shape, jnp.float32))
    dq_ref[...] = (dq * SCALE).astype(dq_ref.dtype)


@jax.jit
def _backward(q, k, v, out, dout, lse):
    batch, seq_len, query_heads, dim = q.shape
    kv_heads = k.shape[2]
    group = query_heads // kv_heads
    stats = jax.ShapeDtypeStruct(lse.shape, jnp.float32)
    rows = pl.BlockSpec((None, BLOCK_M, None, dim), lambda b, t, h: (b, t, h, 0))
    delta = pl.pallas_call(
        _delta_kernel, out_shape=stats, grid=(batch, seq_len // BLOCK_M, query_heads), in_specs=[rows, rows],
        out_specs=pl.BlockSpec((None, None, BLOCK_M), lambda b, t, h: (b, h, t)))(out, dout)

    group_rows = pl.BlockSpec((None, seq_len, group, dim), lambda b, h, n: (b, 0, h, 0))
    key_tile = pl.BlockSpec((None, BLOCK_N, None, dim), lambda b, h, n: (b, n, h, 0))
    group_stats = pl.BlockSpec((None, group, seq_len), lambda b, h, n: (b, h, 0))
    kv_out = jax.ShapeDtypeStruct(k.shape, k.dtype)
    dk, dv = pl.pallas_call(
        _dkdv_kernel, out_shape=(kv_out, kv_out), grid=(batch, kv_heads, seq_len // BLOCK_N),
        in_specs=[group_rows, key_tile, key_tile, group_rows, group_stats, group_stats],
        out_specs=(key_tile, key_tile), compiler_params=_params(8, 1))(q, k, v, dout, lse, delta)

    query_tile = pl.BlockSpec((None, BLOCK_M, None, dim), lambda b, h, m: (b, m, h, 0))
    keys = pl.BlockSpec((None, seq_len, None, dim), lambda b, h, m: (b, 0, h // group, 0))
    query_stats = pl.BlockSpec((None, None, BLOCK_M), lambda b, h, m: (b, h, m))
    dq = pl.pallas_call(
        _dq_kernel, out_shape=jax.ShapeDtypeStruct(q.shape, q.dtype), grid=(batch, query_heads, seq_len // BLOCK_M),
        in_specs=[query_tile, keys, keys, query_tile, query_stats, query_stats],
        out_specs=query_tile, compiler_params=_params(8, 1))(q, k, v, dout, lse, delta)
    return dq, dk, dv


def solve(q, k, v, out, dout, lse):
    assert q.shape[1] % BLOCK_M == 0 and q.shape[1] % BLOCK_N == 0
    j = lambda t: jax.dlpack.from_dlpack(t.contiguous())  # noqa: E731
    dq, dk, dv = _backward(j(q), j(k), j(v), j(out), j(dout), j(lse.float()))
    return torch.from_dlpack(dq), torch.from_dlpack(dk), torch.from_dlpack(dv)
