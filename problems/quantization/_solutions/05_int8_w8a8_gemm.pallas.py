"""JAX Pallas solution for 05_int8_w8a8_gemm: one program per 64x64 output tile accumulates int8 x int8 products in
int32 on the tensor cores over blocks of 128 of the inner dimension, then applies both scales in float32."""

import jax
import jax.numpy as jnp
import torch
from jax.experimental import pallas as pl

BLOCK_M = 64
BLOCK_N = 64
BLOCK_K = 128


def _kernel(a_ref, w_ref, a_scale_ref, w_scale_ref, o_ref):
    def body(i, acc):
        a = a_ref[:, pl.ds(i * BLOCK_K, BLOCK_K)]  # [BM, BK] int8
        w = w_ref[:, pl.ds(i * BLOCK_K, BLOCK_K)]  # [BN, BK] int8
        return acc + jax.lax.dot_general(a, w, (((1,), (1,)), ((), ())), preferred_element_type=jnp.int32)

    acc = jax.lax.fori_loop(0, a_ref.shape[1] // BLOCK_K, body, jnp.zeros((BLOCK_M, BLOCK_N), jnp.int32))
    o_ref[...] = (acc.astype(jnp.float32) * a_scale_ref[...] * w_scale_ref[...]).astype(o_ref.dtype)


@jax.jit
def _gemm(activations, weights, activation_scales, weight_scales):
    tokens, inner = activations.shape
    channels = weights.shape[0]
    return pl.pallas_call(
        _kernel, out_shape=jax.ShapeDtypeStruct((tokens, channels), jnp.float16),
        grid=(tokens // BLOCK_M, channels // BLOCK_N),
        in_specs=[pl.BlockSpec((BLOCK_M, inner), lambda i, j: (i, 0)),
                  pl.BlockSpec((BLOCK_N, inner), lambda i, j: (j, 0)),
                  pl.BlockSpec((BLOCK_M, 1), lambda i, j: (i, 0)),
                  pl.BlockSpec((1, BLOCK_N), lambda i, j: (0, j))],
        out_specs=pl.BlockSpec((BLOCK_M, BLOCK_N), lambda i, j: (i, j)),
    )(activations, weights, activation_scales, weight_scales)


def solve(activations, weights, activation_scales, weight_scales):
    out = _gemm(*(jax.dlpack.from_dlpack(t.contiguous())
                  for t in (activations, weights, activation_scales, weight_scales)))
    return torch.from_dlpack(out)
