"""JAX Pallas solution for 64_qwen3_moe_decode: one program per expert lists its routing slots (a prefix sum of 'is
mine' flags, scattered by their place); then per (expert, 64 columns) a gate/up GEMM over the expert's slots, 16 at
a time, gathering the slots' token rows, with the SwiGLU epilogue (h stored in bf16, as the model keeps it), and a
down GEMM scaled by each slot's routing weight (tensor-core dots, bf16 in, float32 out, each weight tile read once
per 16 slots); a last kernel sums each token's 8 partial rows in k order."""

import jax
import jax.numpy as jnp
import torch
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plgpu

TOP_K = 8
BLOCK_M = 16  # slots per GEMM pass
BLOCK_N = 64  # output columns per program
BLOCK_K = 128  # inner values per dot


def _params(num_warps, num_stages):
    make = getattr(plgpu, "CompilerParams", None) or getattr(plgpu, "TritonCompilerParams")
    return make(num_warps=num_warps, num_stages=num_stages)


def _bucket_kernel(ids_ref, bucket_ref, counts_ref):
    hit = ids_ref[...] == pl.program_id(0)
    flags = hit.astype(jnp.int32)
    place = jnp.where(hit, jax.lax.cumsum(flags, axis=0) - 1, 0)
    plgpu.store(bucket_ref.at[place], jax.lax.broadcasted_iota(jnp.int32, flags.shape, 0), mask=hit)
    counts_ref[...] = jnp.full((1,), jnp.sum(flags), jnp.int32)


def _slot_tile(bucket_ref, count, m):
    rows = m * BLOCK_M + jax.lax.broadcasted_iota(jnp.int32, (BLOCK_M,), 0)
    ok = rows < count
    return jnp.where(ok, bucket_ref[pl.ds(m * BLOCK_M, BLOCK_M)], 0), ok


def _gate_up_kernel(bucket_ref, counts_ref, x_ref, w_ref, h_ref):
    count = counts_ref[0]
    n0 = pl.program_id(1) * BLOCK_N
    intermediate = w_ref.shape[0] // 2
    dims = (((1,), (1,)), ((), ()))

    def tile(m, carry):
        slots, ok = _slot_tile(bucket_ref, count, m)
        tokens = slots // TOP_K

        def step(k, accs):
            gate, up = accs
            inner = pl.ds(k * BLOCK_K, BLOCK_K)
            a = x_ref[tokens, inner]  # [BLOCK_M, BLOCK_K]
            gate = gate + jax.lax.dot_general(a, w_ref[pl.ds(n0, BLOCK_N), inner], dims,
                                              preferred_element_type=jnp.float32)
            up = up + jax.lax.dot_general(a, w_ref[pl.ds(intermediate + n0, BLOCK_N), inner], dims,
                                          preferred_element_type=jnp.float32)
            return gate, up

        zeros = jnp.zeros((BLOCK_M, BLOCK_N), jnp.float32)
        gate, up = jax.lax.fori_loop(0, x_ref.shape[1] // BLOCK_K, step, (zeros, zeros))
        h = gate / (1.0 + jnp.exp(-gate)) * up
        plgpu.store(h_ref.at[slots, pl.ds(n0, BLOCK_N)], h.astype(h_ref.dtype), mask=ok[:, None])
        return carry

    jax.lax.fori_loop(0, (count + BLOCK_M - 1) // BLOCK_M, tile, 0)


def _down_kernel(bucket_ref, counts_ref, h_ref, w_ref, weights_ref, partial_ref):
    count = counts_ref[0]
    n0 = pl.program_id(1) * BLOCK_N
    dims = (((1,), (1,)), ((), ()))

    def tile(m, carry):
        slots, ok = _slot_tile(bucket_ref, count, m)

        def step(k, acc):
            inner = pl.ds(k * BLOCK_K, BLOCK_K)
            return acc + jax.lax.dot_general(h_ref[slots, inner], w_ref[pl.ds(n0, BLOCK_N), inner], dims,
                                             preferred_element_type=jnp.float32)

        acc = jax.lax.fori_loop(0, h_ref.shape[1] // BLOCK_K, step, jnp.zeros((BLOCK_M, BLOCK_N), jnp.float32))
        plgpu.store(partial_ref.at[slots, pl.ds(n0, BLOCK_N)], acc * weights_ref[slots][:, None], mask=ok[:, None])
        return carry

    jax.lax.fori_loop(0, (count + BLOCK_M - 1) // BLOCK_M, tile, 0)


def _combine_kernel(partial_ref, o_ref):
    total = partial_ref[0, :]
    for k in range(1, TOP_K):
        total = total + partial_ref[k, :]
    o_ref[...] = total.astype(o_ref.dtype)


@jax.jit
def _moe(x, w13, w2, weights, ids):
    tokens, hidden = x.shape
    experts, width, _ = w13.shape
    intermediate = width // 2
    slots = ids.shape[0]
    whole = lambda shape: pl.BlockSpec(shape, lambda *_: (0,) * len(shape))  # noqa: E731
    bucket, counts = pl.pallas_call(
        _bucket_kernel, grid=(experts,),
        out_shape=(jax.ShapeDtypeStruct((experts, slots), jnp.int32), jax.ShapeDtypeStruct((experts,), jnp.int32)),
        in_specs=[whole((slots,))],
        out_specs=(pl.BlockSpec((None, slots), lambda e: (e, 0)), pl.BlockSpec((1,), lambda e: (e,))))(ids)
    own_list = pl.BlockSpec((None, slots), lambda e, n: (e, 0))
    own_count = pl.BlockSpec((1,), lambda e, n: (e,))
    h = pl.pallas_call(
        _gate_up_kernel, grid=(experts, intermediate // BLOCK_N),
        out_shape=jax.ShapeDtypeStruct((slots, intermediate), x.dtype),
        in_specs=[own_list, own_count, whole(x.shape), pl.BlockSpec((None, width, hidden), lambda e, n: (e, 0, 0))],
        out_specs=whole((slots, intermediate)), compiler_params=_params(4, 3))(bucket, counts, x, w13)
    partial = pl.pallas_call(
        _down_kernel, grid=(experts, hidden // BLOCK_N),
        out_shape=jax.ShapeDtypeStruct((slots, hidden), jnp.float32),
        in_specs=[own_list, own_count, whole(h.shape), pl.BlockSpec((None, hidden, intermediate),
                                                                    lambda e, n: (e, 0, 0)), whole((slots,))],
        out_specs=whole((slots, hidden)), compiler_params=_params(4, 3))(bucket, counts, h, w2, weights)
    return pl.pallas_call(
        _combine_kernel, grid=(tokens,), out_shape=jax.ShapeDtypeStruct((tokens, hidden), x.dtype),
        in_specs=[pl.BlockSpec((TOP_K, hidden), lambda t: (t, 0))],
        out_specs=pl.BlockSpec((None, hidden), lambda t: (t, 0)))(partial)


def solve(x, w13, w2, topk_weights, topk_ids):
    tokens, top_k = topk_ids.shape
    assert top_k == TOP_K and w13.shape[1] % (2 * BLOCK_N) == 0 and x.shape[1] % BLOCK_N == 0
    assert x.shape[1] % BLOCK_K == 0 and w2.shape[2] % BLOCK_K == 0
    slots = tokens * top_k
    j = lambda t: jax.dlpack.from_dlpack(t.contiguous())  # noqa: E731
    out = _moe(j(x), j(w13), j(w2), j(topk_weights.float().contiguous().view(slots)),
               j(topk_ids.to(torch.int32).contiguous().view(slots)))
    return torch.from_dlpack(out)
