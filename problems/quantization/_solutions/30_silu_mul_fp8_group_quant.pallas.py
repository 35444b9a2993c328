"""JAX Pallas solution for 30_silu_mul_fp8_group_quant: one program per (16 tokens, 128-column group) reads the
group's gate and up tiles (two block specs over the merged array), computes silu(gate) * up, the group's amax and
scale and writes the scaled, saturated values in float32; torch rounds them to fp8 e4m3 (a cast)."""

import jax
import jax.numpy as jnp
import torch
from jax.experimental import pallas as pl

ROWS = 16
GROUP_SIZE = 128
FP8_MAX = 448.0
MIN_AMAX = 1e-10


def _kernel(gate_ref, up_ref, scaled_ref, scale_ref):
    gate = gate_ref[...].astype(jnp.float32)
    hidden = gate / (1.0 + jnp.exp(-gate)) * up_ref[...].astype(jnp.float32)
    scale = jnp.maximum(jnp.max(jnp.abs(hidden), axis=1, keepdims=True), MIN_AMAX) / FP8_MAX  # [ROWS, 1]
    scaled_ref[...] = jnp.clip(hidden / scale, -FP8_MAX, FP8_MAX)
    scale_ref[...] = scale


@jax.jit
def _silu_mul_quantize(gate_up):
    tokens, width = gate_up.shape
    groups = width // 2 // GROUP_SIZE
    tile = pl.BlockSpec((ROWS, GROUP_SIZE), lambda i, g: (i, g))
    return pl.pallas_call(
        _kernel, grid=(tokens // ROWS, groups),
        out_shape=(jax.ShapeDtypeStruct((tokens, width // 2), jnp.float32),
                   jax.ShapeDtypeStruct((tokens, groups), jnp.float32)),
        in_specs=[tile, pl.BlockSpec((ROWS, GROUP_SIZE), lambda i, g: (i, g + groups))],
        out_specs=(tile, pl.BlockSpec((ROWS, 1), lambda i, g: (i, g))))(gate_up, gate_up)


def solve(gate_up):
    assert gate_up.shape[0] % ROWS == 0
    scaled, scales = _silu_mul_quantize(jax.dlpack.from_dlpack(gate_up.contiguous()))
    return torch.from_dlpack(scaled).to(torch.float8_e4m3fn), torch.from_dlpack(scales)
