"""JAX Pallas solution for 26_olmoe_fused_expert_swiglu: a grouped gate/up GEMM on the tensor cores with the SwiGLU
in its epilogue. Each program maps its row-tile index to (expert, 64-row tile of that expert's segment) by walking
the expert offsets, computes the gate and the up tile of 128 intermediate columns, rounds as the reference does
(bf16 projection, bf16 silu, bf16 product) and writes a tile-major buffer (rows past the segment's end are never
read back); a second kernel copies each output row out of its tile. The rows get 64 zero rows appended by torch (a
copy) so that the last tile's loads stay in bounds."""

import jax
import jax.numpy as jnp
import torch
from jax.experimental import pallas as pl

BLOCK_M = 64
BLOCK_N = 128
BLOCK_K = 64


def _locate(offsets_ref, tile, experts):
    """(expert, first row) of row tile `tile`, expert -1 past the last tile."""
    expert = jnp.int32(-1)
    start = jnp.int32(0)
    for e in range(experts):
        begin = offsets_ref[e]
        tiles = (offsets_ref[e + 1] - begin + BLOCK_M - 1) // BLOCK_M
        hit = (expert < 0) & (tile < tiles)
        start = jnp.where(hit, begin + tile * BLOCK_M, start)
        tile = jnp.where(expert < 0, tile - tiles, tile)
        expert = jnp.where(hit, e, expert)
    return expert, start


def _gemm_kernel(offsets_ref, a_ref, w_ref, o_ref):
    experts = w_ref.shape[0]
    intermediate = w_ref.shape[1] // 2
    expert, start = _locate(offsets_ref, pl.program_id(1), experts)
    n0 = pl.program_id(0) * BLOCK_N
    safe_expert = jnp.maximum(expert, 0)  # a tile past the last one computes garbage that nobody reads

    def body(i, accs):
        a = a_ref[pl.ds(start, BLOCK_M), pl.ds(i * BLOCK_K, BLOCK_K)]
        gate_w = w_ref[safe_expert, pl.ds(n0, BLOCK_N), pl.ds(i * BLOCK_K, BLOCK_K)]
        up_w = w_ref[safe_expert, pl.ds(intermediate + n0, BLOCK_N), pl.ds(i * BLOCK_K, BLOCK_K)]
        dims = (((1,), (1,)), ((), ()))
        return (accs[0] + jax.lax.dot_general(a, gate_w, dims, preferred_element_type=jnp.float32),
                accs[1] + jax.lax.dot_general(a, up_w, dims, preferred_element_type=jnp.float32))

    zeros = jnp.zeros((BLOCK_M, BLOCK_N), jnp.float32)
    gate, up = jax.lax.fori_loop(0, a_ref.shape[1] // BLOCK_K, body, (zeros, zeros))
    # the reference's bf16 roundings: the projection output, silu's output, the product
    bf16 = o_ref.dtype
    gate = gate.astype(bf16).astype(jnp.float32)
    up = up.astype(bf16).astype(jnp.float32)
    silu = (gate / (1.0 + jnp.exp(-gate))).astype(bf16).astype(jnp.float32)
    o_ref[...] = (silu * up).astype(bf16)


def _unpack_kernel(offsets_ref, tiles_ref, o_ref, *, experts):
    row = pl.program_id(0)
    tile_base = jnp.int32(0)
    position = jnp.int32(0)
    for e in range(experts):
        begin = offsets_ref[e]
        end = offsets_ref[e + 1]
        inside = (row >= begin) & (row < end)
        position = jnp.where(inside, (tile_base + (row - begin) // BLOCK_M) * BLOCK_M + (row - begin) % BLOCK_M,
                             position)
        tile_base = tile_base + (end - begin + BLOCK_M - 1) // BLOCK_M
    o_ref[...] = tiles_ref[position, :]


@jax.jit
def _grouped_swiglu(hidden, w13, expert_offsets):
    padded_rows, inner = hidden.shape
    rows = padded_rows - BLOCK_M
    experts, width, _ = w13.shape
    intermediate = width // 2
    row_tiles = (rows + BLOCK_M - 1) // BLOCK_M + experts
    whole = lambda a: pl.BlockSpec(a.shape, lambda *_: (0,) * a.ndim)  # noqa: E731
    tiles = pl.pallas_call(
        _gemm_kernel, out_shape=jax.ShapeDtypeStruct((row_tiles * BLOCK_M, intermediate), hidden.dtype),
        grid=(intermediate // BLOCK_N, row_tiles), in_specs=[whole(expert_offsets), whole(hidden), whole(w13)],
        out_specs=pl.BlockSpec((BLOCK_M, BLOCK_N), lambda j, t: (t, j)))(expert_offsets, hidden, w13)
    return pl.pallas_call(
        lambda o, t, out: _unpack_kernel(o, t, out, experts=experts),
        out_shape=jax.ShapeDtypeStruct((rows, intermediate), hidden.dtype), grid=(rows,),
        in_specs=[whole(expert_offsets), whole(tiles)],
        out_specs=pl.BlockSpec((None, intermediate), lambda r: (r, 0)),
    )(expert_offsets, tiles)


def solve(hidden, w13, expert_offsets):
    assert (w13.shape[1] // 2) % BLOCK_N == 0 and hidden.shape[1] % BLOCK_K == 0
    padding = torch.zeros(BLOCK_M, hidden.shape[1], device=hidden.device, dtype=hidden.dtype)
    j = lambda t: jax.dlpack.from_dlpack(t.contiguous())  # noqa: E731
    out = _grouped_swiglu(j(torch.cat([hidden, padding])), j(w13), j(expert_offsets.to(torch.int32)))
    return torch.from_dlpack(out)
