"""JAX Pallas solution for 46_streaming_sink_cache_compaction: one program per (sequence, block of 8 kept rows) finds
each row's original position (a sink, or one of the last 1020), its page and slot, copies the value row and
re-rotates the key row (all heads, half-split rotary) by (row - position) times the per-pair frequencies."""

import jax
import jax.numpy as jnp
import torch
from jax.experimental import pallas as pl

KEEP = 1024
SINKS = 4
ROWS = 8


def _kernel(lens_ref, table_ref, freq_ref, k_ref, v_ref, ok_ref, ov_ref):
    b = pl.program_id(0)
    page_size = k_ref.shape[1]
    half = k_ref.shape[3] // 2
    length = lens_ref[b]
    inv_freq = freq_ref[...][None, :]  # [1, half]
    for r in range(ROWS):
        j = pl.program_id(1) * ROWS + r
        position = jnp.where(j < SINKS, j, length - (KEEP - SINKS) + (j - SINKS))
        page = table_ref[b, position // page_size]
        slot = position % page_size
        angle = (j - position).astype(jnp.float32) * inv_freq
        cos, sin = jnp.cos(angle), jnp.sin(angle)
        x1 = k_ref[page, slot, :, pl.ds(0, half)].astype(jnp.float32)  # [heads, half]
        x2 = k_ref[page, slot, :, pl.ds(half, half)].astype(jnp.float32)
        ok_ref[r, :, pl.ds(0, half)] = (x1 * cos - x2 * sin).astype(ok_ref.dtype)
        ok_ref[r, :, pl.ds(half, half)] = (x2 * cos + x1 * sin).astype(ok_ref.dtype)
        ov_ref[r, :, :] = v_ref[page, slot, :, :]


@jax.jit
def _compact(seq_lens, block_table, inv_freq, k_cache, v_cache):
    batch = block_table.shape[0]
    _, _, heads, dim = k_cache.shape
    whole = lambda a: pl.BlockSpec(a.shape, lambda b, i: (0,) * a.ndim)  # noqa: E731
    rows = pl.BlockSpec((None, ROWS, heads, dim), lambda b, i: (b, i, 0, 0))
    out = jax.ShapeDtypeStruct((batch, KEEP, heads, dim), k_cache.dtype)
    return pl.pallas_call(
        _kernel, out_shape=(out, out), grid=(batch, KEEP // ROWS),
        in_specs=[whole(seq_lens), whole(block_table), whole(inv_freq), whole(k_cache), whole(v_cache)],
        out_specs=(rows, rows))(seq_lens, block_table, inv_freq, k_cache, v_cache)


def solve(k_cache, v_cache, block_table, seq_lens, inv_freq):
    j = lambda t: jax.dlpack.from_dlpack(t.contiguous())  # noqa: E731
    keys, values = _compact(j(seq_lens.to(torch.int32)), j(block_table.to(torch.int32)), j(inv_freq.float()),
                            j(k_cache), j(v_cache))
    return torch.from_dlpack(keys), torch.from_dlpack(values)
