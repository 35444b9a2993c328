"""JAX Pallas solution for 45_kv_transfer_pack_hnd: one program per row of the send buffer's capacity finds its
sequence in cu_seq_lens (a scalar scan over the 16 boundaries) and its page through the block table, and copies every
head's key and value row out of the head-major page into the token-major send buffer. The grid and the buffer are
sized from the block table's shape (sequences x pages x page size), never from the packed total, so the kernel is
compiled once, not once per distinct total; programs past the total write nothing, and solve returns the first total
rows."""

import functools

import jax
import torch
from jax.experimental import pallas as pl


def _kernel(cu_ref, table_ref, k_ref, v_ref, send_ref, *, batch, page_size):
    token = pl.program_id(0)

    @pl.when(token < cu_ref[batch])
    def _copy():
        sequence = 0
        for b in range(1, batch):
            sequence = sequence + (cu_ref[b] <= token).astype(jax.numpy.int32)
        position = token - cu_ref[sequence]
        page = table_ref[sequence, position // page_size]
        slot = position % page_size
        send_ref[0, :, :] = k_ref[page, :, slot, :]  # [heads, dim]
        send_ref[1, :, :] = v_ref[page, :, slot, :]


@jax.jit
def _pack(cu_seq_lens, block_table, k_cache, v_cache):
    _, heads, page_size, dim = k_cache.shape
    batch, pages_per_sequence = block_table.shape
    capacity = batch * pages_per_sequence * page_size
    whole = lambda a: pl.BlockSpec(a.shape, lambda t: (0,) * a.ndim)  # noqa: E731
    kernel = functools.partial(_kernel, batch=batch, page_size=page_size)
    return pl.pallas_call(
        kernel, out_shape=jax.ShapeDtypeStruct((2, capacity, heads, dim), k_cache.dtype), grid=(capacity,),
        in_specs=[whole(cu_seq_lens), whole(block_table), whole(k_cache), whole(v_cache)],
        out_specs=pl.BlockSpec((2, None, heads, dim), lambda t: (0, t, 0, 0)),
    )(cu_seq_lens, block_table, k_cache, v_cache)


def solve(k_cache, v_cache, block_table, cu_seq_lens):
    j = lambda t: jax.dlpack.from_dlpack(t.contiguous())  # noqa: E731
    send = _pack(j(cu_seq_lens.to(torch.int32)), j(block_table.to(torch.int32)), j(k_cache), j(v_cache))
    total = int(cu_seq_lens[-1].item())  # read while the kernel runs
    return torch.from_dlpack(send)[:, :total]
