"""JAX Pallas solution for 15_mla_latent_cache_write: one pallas_call with a single crossing from torch into JAX. Torch
packs everything into one bf16 buffer (one torch.cat): the cache first, then the latent rows, the norm weight, the
float32 cos|sin table and the int64 positions and slots (the table and the indices keep their bits), and a call imports
that one buffer through DLPack instead of six arrays. Inside the one jit the cache is sliced out of the buffer (XLA's
copy: the new cache, which the kernel's output aliases, so the cache is copied twice in all, once by the cat and once
here) and the other pieces by slices, reshapes and bitcasts. It trades one more copy of the cache (about 0.05 ms on an
H100) for five fewer DLPack imports: 0.75x [0.73, 0.77] against 0.40x [0.39, 0.41] for six imports (H100, 2026-12-06).
The kernel: rows are seen as 9 chunks of 64 (8 of compressed KV, 1 of rotary key); one program per token RMS-normalises
the compressed chunks, rotates the rotary chunk with interleaved (GPT-J) pairs and writes the 576-wide entry into its
slot of the cache, the pair partner x[i ^ 1] and the per-pair cos/sin spread over the 64 lanes with small one-hot
selections (no gathers or strided loads)."""

import functools

import jax
import jax.numpy as jnp
import torch
from jax.experimental import pallas as pl

CHUNK = 64
LATENT_CHUNKS = 8
EPS = 1e-6


def _kernel(pos_ref, slot_ref, latent_ref, rope_ref, w_ref, cs_ref, cache_ref, o_ref):
    del cache_ref  # aliased to o_ref
    token = pl.program_id(0)
    slot = slot_ref[token]
    latent = latent_ref[...].astype(jnp.float32)  # [8, 64]
    inverse_rms = jax.lax.rsqrt(jnp.sum(latent * latent) / (LATENT_CHUNKS * CHUNK) + EPS)
    o_ref[slot, pl.ds(0, LATENT_CHUNKS), :] = (latent * inverse_rms * w_ref[...].astype(jnp.float32)).astype(
        o_ref.dtype)
    x = rope_ref[...].astype(jnp.float32)  # [64], pairs (2i, 2i + 1)
    cos_sin = cs_ref[pos_ref[token], :]  # [64]: cos of pair i at i, sin at 32 + i
    source = jax.lax.broadcasted_iota(jnp.int32, (CHUNK, CHUNK), 0)
    lane = jax.lax.broadcasted_iota(jnp.int32, (CHUNK, CHUNK), 1)
    pick = lambda values, index: jnp.sum(jnp.where(source == index, values[:, None], 0.0), axis=0)  # noqa: E731
    partner = pick(x, lane ^ 1)
    cos = pick(cos_sin, lane // 2)
    sin = pick(cos_sin, CHUNK // 2 + lane // 2)
    odd = (jax.lax.broadcasted_iota(jnp.int32, (CHUNK,), 0) % 2) == 1
    rotated = x * cos + jnp.where(odd, partner, -partner) * sin  # even: e cos - o sin; odd: o cos + e sin
    o_ref[slot, LATENT_CHUNKS, :] = rotated.astype(o_ref.dtype)


def _low_words(packed, start, count):
    """The `count` int64 values stored as bf16 bits from element `start` of the buffer, as int32 (their low words:
    little-endian, and the values are non-negative and below 2**31)."""
    quads = jax.lax.slice(packed, (start,), (start + 4 * count,)).reshape(count, 2, 2)
    words = jax.lax.bitcast_convert_type(quads, jnp.int32)  # [count, 2]: low word, high word
    return jax.lax.slice(words, (0, 0), (count, 1)).reshape(count)


def _unpack(packed, start, tokens, max_position):
    """The latent rows as [tokens, 9, 64] chunks, the norm weight as [8, 64], the float32 cos|sin table, the positions
    and the slots, read from element `start` of the packed bf16 buffer."""
    width = (LATENT_CHUNKS + 1) * CHUNK
    weight_start = start + tokens * width
    table_start = weight_start + LATENT_CHUNKS * CHUNK
    index_start = table_start + max_position * CHUNK * 2  # the float32 table is two bf16 per value
    chunks = jax.lax.slice(packed, (start,), (weight_start,)).reshape(tokens, LATENT_CHUNKS + 1, CHUNK)
    weight = jax.lax.slice(packed, (weight_start,), (table_start,)).reshape(LATENT_CHUNKS, CHUNK)
    cos_sin = jax.lax.bitcast_convert_type(
        jax.lax.slice(packed, (table_start,), (index_start,)).reshape(max_position, CHUNK, 2), jnp.float32)
    return (chunks, weight, cos_sin, _low_words(packed, index_start, tokens),
            _low_words(packed, index_start + 4 * tokens, tokens))


def _write_call(positions, slots, chunks, weight, cos_sin, cache_rows):
    whole = lambda a: pl.BlockSpec(a.shape, lambda t: (0,) * a.ndim)  # noqa: E731
    return pl.pallas_call(
        _kernel, out_shape=jax.ShapeDtypeStruct(cache_rows.shape, cache_rows.dtype), grid=(chunks.shape[0],),
        in_specs=[whole(positions), whole(slots),
                  pl.BlockSpec((None, LATENT_CHUNKS, CHUNK), lambda t: (t, 0, 0)),
                  pl.BlockSpec((None, None, CHUNK), lambda t: (t, LATENT_CHUNKS, 0)),
                  pl.BlockSpec((LATENT_CHUNKS, CHUNK), lambda t: (0, 0)), whole(cos_sin), whole(cache_rows)],
        out_specs=whole(cache_rows), input_output_aliases={6: 0},
    )(positions, slots, chunks, chunks, weight, cos_sin, cache_rows)


@functools.partial(jax.jit, static_argnames=("layout",))
def _write(packed, layout):
    tokens, max_position, cache_slots = layout
    cache_size = cache_slots * (LATENT_CHUNKS + 1) * CHUNK
    cache_rows = jax.lax.slice(packed, (0,), (cache_size,)).reshape(cache_slots, LATENT_CHUNKS + 1, CHUNK)
    chunks, weight, cos_sin, positions, slots = _unpack(packed, cache_size, tokens, max_position)
    return _write_call(positions, slots, chunks, weight, cos_sin, cache_rows)


def _bits(tensor, dtype):
    """The tensor's bytes as a flat tensor of `dtype` (a view when it is contiguous)."""
    return tensor.reshape(-1).view(dtype)


def solve(kv_latent, norm_weight, positions, cos_sin_cache, kv_cache, slot_mapping):
    pages, page_size, width = kv_cache.shape
    dtype = kv_latent.dtype
    assert width == (LATENT_CHUNKS + 1) * CHUNK and kv_latent.shape[1] == width
    assert norm_weight.numel() == LATENT_CHUNKS * CHUNK
    assert dtype in (torch.bfloat16, torch.float16) and norm_weight.dtype == kv_cache.dtype == dtype
    assert cos_sin_cache.dtype == torch.float32 and cos_sin_cache.shape[1] == CHUNK
    packed = torch.cat([kv_cache.reshape(-1), kv_latent.reshape(-1), norm_weight.reshape(-1),
                        _bits(cos_sin_cache, dtype), _bits(positions.to(torch.int64), dtype),
                        _bits(slot_mapping.to(torch.int64), dtype)])
    new_cache = _write(jax.dlpack.from_dlpack(packed),
                       layout=(kv_latent.shape[0], cos_sin_cache.shape[0], pages * page_size))
    return torch.from_dlpack(new_cache).view(kv_cache.shape)
