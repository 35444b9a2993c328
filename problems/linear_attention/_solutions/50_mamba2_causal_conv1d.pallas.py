"""JAX Pallas solution for 50_mamba2_causal_conv1d: one program per (sequence, 16 channels, 512 time steps) sees its
channels' whole rows and reads the 4 taps as 4 shifted loads of the same 512 columns (masked to zero before the
sequence starts), adds the bias, applies SiLU in float32 and stores bf16."""

import jax
import jax.numpy as jnp
import torch
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plgpu

BLOCK_C = 16
BLOCK_T = 512


def _params(num_warps):
    make = getattr(plgpu, "CompilerParams", None) or getattr(plgpu, "TritonCompilerParams")
    return make(num_warps=num_warps, num_stages=2)


def _kernel(x_ref, w_ref, b_ref, o_ref):
    width = w_ref.shape[1]
    start = pl.program_id(2) * BLOCK_T
    times = start + jax.lax.broadcasted_iota(jnp.int32, (BLOCK_C, BLOCK_T), 1)
    acc = jnp.zeros((BLOCK_C, BLOCK_T), jnp.float32) + b_ref[...].astype(jnp.float32)[:, None]
    for j in range(width):
        shift = width - 1 - j  # tap j reads x[t - shift]
        taps = plgpu.load(x_ref.at[:, pl.ds(start - shift, BLOCK_T)], mask=times >= shift, other=0.0)
        acc = acc + taps.astype(jnp.float32) * w_ref[:, j].astype(jnp.float32)[:, None]
    o_ref[...] = (acc / (1.0 + jnp.exp(-acc))).astype(o_ref.dtype)


@jax.jit
def _conv_silu(x, weight, bias):
    batch, channels, seq_len = x.shape
    width = weight.shape[1]
    return pl.pallas_call(
        _kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        grid=(batch, channels // BLOCK_C, seq_len // BLOCK_T),
        in_specs=[pl.BlockSpec((None, BLOCK_C, seq_len), lambda b, c, t: (b, c, 0)),
                  pl.BlockSpec((BLOCK_C, width), lambda b, c, t: (c, 0)),
                  pl.BlockSpec((BLOCK_C,), lambda b, c, t: (c,))],
        out_specs=pl.BlockSpec((None, BLOCK_C, BLOCK_T), lambda b, c, t: (b, c, t)),
        compiler_params=_params(4))(x, weight, bias)


def solve(x, weight, bias):
    assert x.shape[1] % BLOCK_C == 0 and x.shape[2] % BLOCK_T == 0
    j = lambda t: jax.dlpack.from_dlpack(t.contiguous())  # noqa: E731
    return torch.from_dlpack(_conv_silu(j(x), j(weight), j(bias)))
