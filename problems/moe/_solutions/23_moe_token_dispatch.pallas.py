"""JAX Pallas solution for 23_moe_token_dispatch: a counting sort in four kernels. One program per 256 routing slots
counts its slots per expert (a one-hot sum); one program turns the chunk counts into expert offsets and per-chunk
bases (prefix sums over experts and over chunks); one program per chunk ranks each slot among the chunk's slots of
its expert (a prefix sum of the one-hot columns) and writes the slot to its place in the sorted order; then one
program per 8 sorted rows gathers their tokens' hidden rows."""

import jax
import jax.numpy as jnp
import torch
from jax.experimental import pallas as pl

TOP_K = 4
NUM_EXPERTS = 60
EXPERTS_PAD = 64  # experts padded to a power of two; the padded columns count nothing
CHUNK = 256  # routing slots per program in the count and rank kernels
ROWS = 8  # sorted rows per program in the gather


def _one_hot(ids):
    experts = jax.lax.broadcasted_iota(jnp.int32, (ids.shape[0], EXPERTS_PAD), 1)
    return ids[:, None] == experts


def _count_kernel(ids_ref, counts_ref):
    counts_ref[...] = jnp.sum(_one_hot(ids_ref[...]).astype(jnp.int32), axis=0)


def _scan_kernel(counts_ref, bases_ref, offsets_ref):
    counts = counts_ref[...]  # [chunks, EXPERTS_PAD]
    totals = jnp.sum(counts, axis=0)
    expert_starts = jax.lax.cumsum(totals, axis=0) - totals  # exclusive over experts
    chunk_starts = jax.lax.cumsum(counts, axis=0) - counts  # exclusive over chunks, per expert
    bases_ref[...] = expert_starts[None, :] + chunk_starts
    offsets_ref[...] = expert_starts  # entry NUM_EXPERTS is the total: the padded experts are empty


def _rank_kernel(ids_ref, bases_ref, sorted_ref):
    hot = _one_hot(ids_ref[...])
    running = jax.lax.cumsum(hot.astype(jnp.int32), axis=0)  # same-expert slots up to and including each slot
    rank = jnp.sum(jnp.where(hot, running, 0), axis=1) - 1
    base = jnp.sum(jnp.where(hot, bases_ref[...][None, :], 0), axis=1)
    slots = pl.program_id(0) * CHUNK + jax.lax.broadcasted_iota(jnp.int32, (CHUNK,), 0)
    sorted_ref[base + rank] = slots


def _gather_kernel(sorted_ref, hidden_ref, o_ref):
    for r in range(ROWS):
        o_ref[r, :] = hidden_ref[sorted_ref[r] // TOP_K, :]


@jax.jit
def _dispatch(hidden, ids):
    slots = ids.shape[0]
    hidden_size = hidden.shape[1]
    chunks = slots // CHUNK
    per_chunk = pl.BlockSpec((CHUNK,), lambda c: (c,))
    chunk_row = pl.BlockSpec((None, EXPERTS_PAD), lambda c: (c, 0))
    table = jax.ShapeDtypeStruct((chunks, EXPERTS_PAD), jnp.int32)
    counts = pl.pallas_call(_count_kernel, out_shape=table, grid=(chunks,), in_specs=[per_chunk],
                            out_specs=chunk_row)(ids)
    whole_table = pl.BlockSpec((chunks, EXPERTS_PAD), lambda i: (0, 0))
    bases, offsets = pl.pallas_call(
        _scan_kernel, out_shape=(table, jax.ShapeDtypeStruct((EXPERTS_PAD,), jnp.int32)), grid=(1,),
        in_specs=[whole_table], out_specs=(whole_table, pl.BlockSpec((EXPERTS_PAD,), lambda i: (0,))))(counts)
    sorted_slots = pl.pallas_call(
        _rank_kernel, out_shape=jax.ShapeDtypeStruct((slots,), jnp.int32), grid=(chunks,),
        in_specs=[per_chunk, chunk_row], out_specs=pl.BlockSpec((slots,), lambda c: (0,)))(ids, bases)
    permuted = pl.pallas_call(
        _gather_kernel, out_shape=jax.ShapeDtypeStruct((slots, hidden_size), hidden.dtype), grid=(slots // ROWS,),
        in_specs=[pl.BlockSpec((ROWS,), lambda r: (r,)), pl.BlockSpec(hidden.shape, lambda r: (0, 0))],
        out_specs=pl.BlockSpec((ROWS, hidden_size), lambda r: (r, 0)))(sorted_slots, hidden)
    return permuted, sorted_slots, offsets


def solve(hidden, topk_ids):
    tokens, top_k = topk_ids.shape
    assert top_k == TOP_K and (tokens * top_k) % CHUNK == 0
    ids = topk_ids.to(torch.int32).contiguous().view(tokens * top_k)
    permuted, sorted_slots, offsets = _dispatch(jax.dlpack.from_dlpack(hidden.contiguous()),
                                                jax.dlpack.from_dlpack(ids))
    return torch.from_dlpack(permuted), torch.from_dlpack(sorted_slots), torch.from_dlpack(offsets)[:NUM_EXPERTS + 1]
