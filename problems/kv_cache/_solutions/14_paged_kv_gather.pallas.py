"""JAX Pallas solution for 14_paged_kv_gather: one program per output token finds its sequence in cu_seq_lens (a
scalar scan over the 16 boundaries), its page through the block table, and copies its key and value rows
(heads x dim) out of the pool."""

import functools

import jax
import torch
from jax.experimental import pallas as pl


def _kernel(cu_ref, table_ref, k_ref, v_ref, ok_ref, ov_ref, *, batch, page_size):
    token = pl.program_id(0)
    sequence = 0
    for b in range(1, batch):
        sequence = sequence + (cu_ref[b] <= token).astype(jax.numpy.int32)
    position = token - cu_ref[sequence]
    slot = table_ref[sequence, position // page_size] * page_size + position % page_size
    ok_ref[...] = k_ref[slot, :, :]
    ov_ref[...] = v_ref[slot, :, :]


@functools.partial(jax.jit, static_argnames=("total", "page_size"))
def _gather(cu_seq_lens, block_table, key_slots, value_slots, total, page_size):
    _, heads, dim = key_slots.shape
    whole = lambda a: pl.BlockSpec(a.shape, lambda t: (0,) * a.ndim)  # noqa: E731
    row = pl.BlockSpec((None, heads, dim), lambda t: (t, 0, 0))
    out = jax.ShapeDtypeStruct((total, heads, dim), key_slots.dtype)
    kernel = functools.partial(_kernel, batch=block_table.shape[0], page_size=page_size)
    return pl.pallas_call(kernel, out_shape=(out, out), grid=(total,),
                          in_specs=[whole(cu_seq_lens), whole(block_table), whole(key_slots), whole(value_slots)],
                          out_specs=(row, row))(cu_seq_lens, block_table, key_slots, value_slots)


def solve(key_cache, value_cache, block_table, cu_seq_lens):
    pages, page_size, heads, dim = key_cache.shape
    j = lambda t: jax.dlpack.from_dlpack(t.contiguous())  # noqa: E731
    keys, values = _gather(j(cu_seq_lens.to(torch.int32)), j(block_table.to(torch.int32)),
                           j(key_cache.view(pages * page_size, heads, dim)),
                           j(value_cache.view(pages * page_size, heads, dim)),
                           total=int(cu_seq_lens[-1].item()), page_size=page_size)
    return torch.from_dlpack(keys), torch.from_dlpack(values)
