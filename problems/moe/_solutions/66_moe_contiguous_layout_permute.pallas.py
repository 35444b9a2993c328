"""JAX Pallas solution for 66_moe_contiguous_layout_permute: one program per expert ranks its slots in slot order (a
chunked prefix sum of 'is mine' flags) and counts them; one program turns the counts into 128-aligned segment starts;
one program per 1024 slots writes row_of and records each slot as the source of its row; then one program per 8 rows
finds each row's segment (the last expert whose start is at most the row), writes m_indices, and copies the row's
token, or zeros for a padding row."""

import jax
import jax.numpy as jnp
import torch
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plgpu

NUM_EXPERTS = 256
TOP_K = 8
ALIGN = 128
RANK_CHUNK = 4096  # slots per step of the per-expert rank loop
PLACE_CHUNK = 1024  # slots per program in the place kernel
ROWS = 8  # rows per program in the copy
COLUMNS = 1024  # hidden features per copy step


def _rank_kernel(ids_ref, rank_ref, counts_ref):
    expert = pl.program_id(0)

    def step(i, base):
        chunk = pl.ds(i * RANK_CHUNK, RANK_CHUNK)
        hit = ids_ref[chunk] == expert
        flags = hit.astype(jnp.int32)
        plgpu.store(rank_ref.at[chunk], base + jax.lax.cumsum(flags, axis=0) - 1, mask=hit)
        return base + jnp.sum(flags)

    total = jax.lax.fori_loop(0, ids_ref.shape[0] // RANK_CHUNK, step, jnp.int32(0))
    counts_ref[...] = jnp.full((1,), total, jnp.int32)


def _starts_kernel(counts_ref, starts_ref):
    padded = (counts_ref[...] + (ALIGN - 1)) // ALIGN * ALIGN
    starts_ref[...] = jax.lax.cumsum(padded, axis=0) - padded


def _place_kernel(ids_ref, rank_ref, starts_ref, row_of_ref, source_ref):
    rows = starts_ref[ids_ref[...]] + rank_ref[...]
    row_of_ref[...] = rows
    source_ref[rows] = pl.program_id(0) * PLACE_CHUNK + jax.lax.broadcasted_iota(jnp.int32, (PLACE_CHUNK,), 0)


def _copy_kernel(starts_ref, counts_ref, source_ref, x_ref, o_ref, m_ref):
    first = pl.program_id(0) * ROWS
    starts = starts_ref[...]
    rows = first + jax.lax.broadcasted_iota(jnp.int32, (ROWS,), 0)
    owners = jnp.sum((starts[None, :] <= rows[:, None]).astype(jnp.int32), axis=1) - 1
    used = rows - starts_ref[owners] < counts_ref[owners]
    m_ref[...] = jnp.where(used, owners, -1)
    for r in range(ROWS):
        row = first + r
        owner = jnp.sum((starts <= row).astype(jnp.int32)) - 1
        filled = row - starts_ref[owner] < counts_ref[owner]
        token = jnp.where(filled, source_ref[row], 0) // TOP_K
        for c in range(x_ref.shape[1] // COLUMNS):
            columns = pl.ds(c * COLUMNS, COLUMNS)
            o_ref[r, columns] = jnp.where(filled, x_ref[token, columns], jnp.zeros((), x_ref.dtype))


@jax.jit
def _permute(x, ids):
    slots = ids.shape[0]
    hidden = x.shape[1]
    capacity = slots + NUM_EXPERTS * (ALIGN - 1)
    whole = lambda a: pl.BlockSpec(a.shape, lambda *_: (0,) * len(a.shape))  # noqa: E731
    flat = jax.ShapeDtypeStruct((slots,), jnp.int32)
    per_expert = jax.ShapeDtypeStruct((NUM_EXPERTS,), jnp.int32)
    rank, counts = pl.pallas_call(
        _rank_kernel, out_shape=(flat, per_expert), grid=(NUM_EXPERTS,), in_specs=[whole(flat)],
        out_specs=(whole(flat), pl.BlockSpec((1,), lambda e: (e,))))(ids)
    starts = pl.pallas_call(_starts_kernel, out_shape=per_expert, grid=(1,), in_specs=[whole(per_expert)],
                            out_specs=whole(per_expert))(counts)
    per_chunk = pl.BlockSpec((PLACE_CHUNK,), lambda c: (c,))
    sources_shape = jax.ShapeDtypeStruct((capacity,), jnp.int32)
    row_of, sources = pl.pallas_call(
        _place_kernel, out_shape=(flat, sources_shape), grid=(slots // PLACE_CHUNK,),
        in_specs=[per_chunk, per_chunk, whole(per_expert)], out_specs=(per_chunk, whole(sources_shape)))(
            ids, rank, starts)
    permuted, m_indices = pl.pallas_call(
        _copy_kernel, out_shape=(jax.ShapeDtypeStruct((capacity, hidden), x.dtype), sources_shape),
        grid=(capacity // ROWS,),
        in_specs=[whole(per_expert), whole(per_expert), whole(sources_shape), whole(x)],
        out_specs=(pl.BlockSpec((ROWS, hidden), lambda r: (r, 0)), pl.BlockSpec((ROWS,), lambda r: (r,))))(
            starts, counts, sources, x)
    return permuted, m_indices, row_of


def solve(x, topk_ids):
    tokens, top_k = topk_ids.shape
    slots = tokens * top_k
    assert top_k == TOP_K and slots % RANK_CHUNK == 0 and slots % PLACE_CHUNK == 0
    assert x.shape[1] % COLUMNS == 0 and (slots + NUM_EXPERTS * (ALIGN - 1)) % ROWS == 0
    ids = topk_ids.to(torch.int32).contiguous().view(slots)
    permuted, m_indices, row_of = _permute(jax.dlpack.from_dlpack(x.contiguous()), jax.dlpack.from_dlpack(ids))
    return torch.from_dlpack(permuted), torch.from_dlpack(m_indices), torch.from_dlpack(row_of).view(tokens, top_k)
