"""JAX Pallas solution for 68_capacity_token_dispatch: per-expert stable ranks by counting, then a gather. One program
per 1024 routing slots counts its slots per expert; one program turns the counts into per-chunk bases (a prefix sum
over chunks) and expert totals; one program per chunk ranks each slot (its chunk's base plus a prefix sum of the
one-hot columns), writes slot_of and records the kept slots' sources by destination row; then one program per 8
destination rows copies each row's token, or zeros where the expert's capacity went unused."""

import jax
import jax.numpy as jnp
import torch
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plgpu

NUM_EXPERTS = 8
TOP_K = 2
CHUNK = 1024  # routing slots per program in the count and rank kernels
ROWS = 8  # destination rows per program in the copy


def _one_hot(ids):
    experts = jax.lax.broadcasted_iota(jnp.int32, (ids.shape[0], NUM_EXPERTS), 1)
    return ids[:, None] == experts


def _count_kernel(ids_ref, counts_ref):
    counts_ref[...] = jnp.sum(_one_hot(ids_ref[...]).astype(jnp.int32), axis=0)


def _scan_kernel(counts_ref, bases_ref, totals_ref):
    counts = counts_ref[...]  # [chunks, NUM_EXPERTS]
    bases_ref[...] = jax.lax.cumsum(counts, axis=0) - counts  # exclusive over chunks, per expert
    totals_ref[...] = jnp.sum(counts, axis=0)


def _rank_kernel(ids_ref, bases_ref, slot_of_ref, source_ref, *, capacity):
    ids = ids_ref[...]
    hot = _one_hot(ids)
    running = jax.lax.cumsum(hot.astype(jnp.int32), axis=0)
    rank = jnp.sum(jnp.where(hot, running + bases_ref[...][None, :], 0), axis=1) - 1
    kept = rank < capacity
    destination = ids * capacity + rank
    slot_of_ref[...] = jnp.where(kept, destination, -1)
    slots = pl.program_id(0) * CHUNK + jax.lax.broadcasted_iota(jnp.int32, (CHUNK,), 0)
    plgpu.store(source_ref.at[jnp.where(kept, destination, 0)], slots, mask=kept)


def _copy_kernel(totals_ref, source_ref, x_ref, o_ref, *, capacity):
    for r in range(ROWS):
        row = pl.program_id(0) * ROWS + r
        expert = row // capacity
        used = row - expert * capacity < totals_ref[expert]
        token = jnp.where(used, source_ref[row], 0) // TOP_K
        o_ref[r, :] = jnp.where(used, x_ref[token, :], jnp.zeros((), x_ref.dtype))


@jax.jit
def _dispatch(x, ids):
    slots = ids.shape[0]
    hidden = x.shape[1]
    capacity = slots // NUM_EXPERTS
    chunks = slots // CHUNK
    per_chunk = pl.BlockSpec((CHUNK,), lambda c: (c,))
    chunk_row = pl.BlockSpec((None, NUM_EXPERTS), lambda c: (c, 0))
    table = jax.ShapeDtypeStruct((chunks, NUM_EXPERTS), jnp.int32)
    counts = pl.pallas_call(_count_kernel, out_shape=table, grid=(chunks,), in_specs=[per_chunk],
                            out_specs=chunk_row)(ids)
    whole_table = pl.BlockSpec((chunks, NUM_EXPERTS), lambda i: (0, 0))
    experts = pl.BlockSpec((NUM_EXPERTS,), lambda i: (0,))
    bases, totals = pl.pallas_call(
        _scan_kernel, out_shape=(table, jax.ShapeDtypeStruct((NUM_EXPERTS,), jnp.int32)), grid=(1,),
        in_specs=[whole_table], out_specs=(whole_table, experts))(counts)
    rows = NUM_EXPERTS * capacity
    flat = jax.ShapeDtypeStruct((slots,), jnp.int32)
    slot_of, sources = pl.pallas_call(
        lambda i, b, s, src: _rank_kernel(i, b, s, src, capacity=capacity),
        out_shape=(flat, jax.ShapeDtypeStruct((rows,), jnp.int32)), grid=(chunks,),
        in_specs=[per_chunk, chunk_row], out_specs=(per_chunk, pl.BlockSpec((rows,), lambda c: (0,))))(ids, bases)
    dispatched = pl.pallas_call(
        lambda t, s, xr, o: _copy_kernel(t, s, xr, o, capacity=capacity),
        out_shape=jax.ShapeDtypeStruct((rows, hidden), x.dtype), grid=(rows // ROWS,),
        in_specs=[pl.BlockSpec((NUM_EXPERTS,), lambda r: (0,)), pl.BlockSpec((rows,), lambda r: (0,)),
                  pl.BlockSpec(x.shape, lambda r: (0, 0))],
        out_specs=pl.BlockSpec((ROWS, hidden), lambda r: (r, 0)))(totals, sources, x)
    return dispatched.reshape(NUM_EXPERTS, capacity, hidden), slot_of


def solve(x, topk_ids):
    tokens, top_k = topk_ids.shape
    assert top_k == TOP_K and (tokens * top_k) % CHUNK == 0 and (tokens * top_k // NUM_EXPERTS) % ROWS == 0
    ids = topk_ids.to(torch.int32).contiguous().view(tokens * top_k)
    dispatched, slot_of = _dispatch(jax.dlpack.from_dlpack(x.contiguous()), jax.dlpack.from_dlpack(ids))
    return torch.from_dlpack(dispatched), torch.from_dlpack(slot_of).view(tokens, top_k)
