"""JAX Pallas solution for 74_nvfp4_quantize: rows are seen as blocks of 8 value pairs. A first kernel writes each
block's amax / 6 * global_scale (saturated to 448) in float32; torch rounds those to the fp8 e4m3 block scales (a
cast); a second kernel scales each pair by global_scale / s, encodes e2m1 codes and packs them into one byte."""

import jax
import jax.numpy as jnp
import torch
from jax.experimental import pallas as pl

NV_BLOCK = 16
FP8_MAX = 448.0
ROWS = 8
BLOCKS = 32


def _e2m1_code(value):
    a = jnp.abs(value)
    magnitude = sum(jnp.where(test, 1, 0) for test in (a > 0.25, a >= 0.75, a > 1.25, a >= 1.75, a > 2.5, a >= 3.5,
                                                        a > 5.0))
    return magnitude + jnp.where(value < 0, 8, 0)


def _scale_kernel(x_ref, g_ref, raw_ref):
    amax = jnp.maximum(jnp.max(jnp.abs(x_ref[:, :, :, 0].astype(jnp.float32)), axis=2),
                       jnp.max(jnp.abs(x_ref[:, :, :, 1].astype(jnp.float32)), axis=2))
    raw_ref[...] = jnp.minimum(amax / 6.0 * g_ref[0], FP8_MAX)


def _encode_kernel(x_ref, g_ref, s_ref, packed_ref):
    s = s_ref[...]
    multiplier = jnp.where(s > 0, g_ref[0] / s, 0.0)[:, :, None]
    low = _e2m1_code(x_ref[:, :, :, 0].astype(jnp.float32) * multiplier)
    high = _e2m1_code(x_ref[:, :, :, 1].astype(jnp.float32) * multiplier)
    packed_ref[...] = (low | (high << 4)).astype(jnp.uint8)


def _specs(x):
    tokens, hidden = x.shape
    blocks = hidden // NV_BLOCK
    grid = (tokens // ROWS, blocks // BLOCKS)
    pairs = pl.BlockSpec((ROWS, BLOCKS, NV_BLOCK // 2, 2), lambda i, b: (i, b, 0, 0))
    scale = pl.BlockSpec((ROWS, BLOCKS), lambda i, b: (i, b))
    return x.reshape(tokens, blocks, NV_BLOCK // 2, 2), grid, pairs, scale, pl.BlockSpec((1,), lambda i, b: (0,))


@jax.jit
def _block_scales(x, g):
    pairs, grid, pair_spec, scale_spec, g_spec = _specs(x)
    return pl.pallas_call(_scale_kernel, grid=grid, out_shape=jax.ShapeDtypeStruct(pairs.shape[:2], jnp.float32),
                          in_specs=[pair_spec, g_spec], out_specs=scale_spec)(pairs, g)


@jax.jit
def _encode(x, g, scales):
    pairs, grid, pair_spec, scale_spec, g_spec = _specs(x)
    packed = pl.pallas_call(
        _encode_kernel, grid=grid, out_shape=jax.ShapeDtypeStruct(pairs.shape[:3], jnp.uint8),
        in_specs=[pair_spec, g_spec, scale_spec],
        out_specs=pl.BlockSpec((ROWS, BLOCKS, NV_BLOCK // 2), lambda i, b: (i, b, 0)))(pairs, g, scales)
    return packed.reshape(x.shape[0], x.shape[1] // 2)


def solve(x, global_scale):
    assert x.shape[0] % ROWS == 0 and (x.shape[1] // NV_BLOCK) % BLOCKS == 0
    xj = jax.dlpack.from_dlpack(x.contiguous())
    g = jax.dlpack.from_dlpack(global_scale.float().contiguous().view(1))
    s8 = torch.from_dlpack(_block_scales(xj, g)).to(torch.float8_e4m3fn)
    packed = _encode(xj, g, jax.dlpack.from_dlpack(s8.float()))
    return torch.from_dlpack(packed), s8
