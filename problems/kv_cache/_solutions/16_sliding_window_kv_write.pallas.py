"""JAX Pallas solution for 16_sliding_window_kv_write: one ring-buffer write kernel with a single crossing from torch
into JAX.
Torch packs everything into one bf16 buffer (one torch.cat): the two caches first, then the keys, the values and the
int64 start positions (which keep their bits), and a call imports that one buffer through DLPack instead of five
arrays. Inside the one jit the caches are sliced out of the buffer (XLA's copy: the new caches, which the kernel's
outputs alias, so the caches are copied twice in all, once by the cat and once here), then the keys and values (a 16
MB copy) and the starts as the low words of their bits. It trades one more copy of the caches (about 0.1 ms on an
H100) for two fewer DLPack imports."""

import functools

import jax
import jax.numpy as jnp
import torch
from jax.experimental import pallas as pl


def _kernel(start_ref, k_ref, v_ref, kc_ref, vc_ref, ok_ref, ov_ref):
    del kc_ref, vc_ref  # aliased to ok_ref / ov_ref
    b = pl.program_id(0)
    slot = (start_ref[b] + pl.program_id(1)) % ok_ref.shape[2]
    ok_ref[b, :, slot, :] = k_ref[...]  # [heads, dim]
    ov_ref[b, :, slot, :] = v_ref[...]


def _low_words(packed, start, count):
    """The `count` int64 values stored as bf16 bits from element `start` of the buffer, as int32 (their low words:
    little-endian, and the values are non-negative and below 2**31)."""
    quads = jax.lax.slice(packed, (start,), (start + 4 * count,)).reshape(count, 2, 2)
    words = jax.lax.bitcast_convert_type(quads, jnp.int32)  # [count, 2]: low word, high word
    return jax.lax.slice(words, (0, 0), (count, 1)).reshape(count)


def _unpack(packed, start, shape):
    """The keys and values ([batch, chunk, heads, dim]) and the int32 starts, from element `start` of the buffer."""
    size = shape[0] * shape[1] * shape[2] * shape[3]
    key = jax.lax.slice(packed, (start,), (start + size,)).reshape(shape)
    value = jax.lax.slice(packed, (start + size,), (start + 2 * size,)).reshape(shape)
    return key, value, _low_words(packed, start + 2 * size, shape[0])


def _ring_write_call(start_positions, key, value, key_cache, value_cache):
    batch, chunk, heads, dim = key.shape
    whole = lambda a: pl.BlockSpec(a.shape, lambda b, t: (0,) * a.ndim)  # noqa: E731
    row = pl.BlockSpec((None, None, heads, dim), lambda b, t: (b, t, 0, 0))
    out = jax.ShapeDtypeStruct(key_cache.shape, key_cache.dtype)
    return pl.pallas_call(
        _kernel, out_shape=(out, out), grid=(batch, chunk),
        in_specs=[whole(start_positions), row, row, whole(key_cache), whole(value_cache)],
        out_specs=(whole(key_cache), whole(value_cache)), input_output_aliases={3: 0, 4: 1},
    )(start_positions, key, value, key_cache, value_cache)


@functools.partial(jax.jit, static_argnames=("shape", "cache_shape"))
def _ring_write(packed, shape, cache_shape):
    cache_size = cache_shape[0] * cache_shape[1] * cache_shape[2] * cache_shape[3]
    key_cache = jax.lax.slice(packed, (0,), (cache_size,)).reshape(cache_shape)
    value_cache = jax.lax.slice(packed, (cache_size,), (2 * cache_size,)).reshape(cache_shape)
    key, value, start_positions = _unpack(packed, 2 * cache_size, shape)
    return _ring_write_call(start_positions, key, value, key_cache, value_cache)


def solve(key, value, key_cache, value_cache, start_positions):
    dtype = key.dtype
    assert dtype in (torch.bfloat16, torch.float16) and value.dtype == key_cache.dtype == value_cache.dtype == dtype
    assert value_cache.shape == key_cache.shape
    # starts stay below 100000: the low word holds them, and int32 holds start + token
    packed = torch.cat([key_cache.reshape(-1), value_cache.reshape(-1), key.reshape(-1), value.reshape(-1),
                        start_positions.to(torch.int64).reshape(-1).view(dtype)])
    new_keys, new_values = _ring_write(jax.dlpack.from_dlpack(packed), shape=tuple(key.shape),
                                       cache_shape=tuple(key_cache.shape))
    return torch.from_dlpack(new_keys), torch.from_dlpack(new_values)
