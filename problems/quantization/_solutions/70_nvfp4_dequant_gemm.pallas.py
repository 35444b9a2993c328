"""JAX Pallas solution for 70_nvfp4_dequant_gemm: one program per 64 weight rows computes all 64 tokens' outputs for
them. Each step decodes 4 NVFP4 blocks (32 packed bytes) per weight row: e2m1 codes from their bit fields, the e4m3
block scale from its bit fields, their product exact in bf16, for the even (low nibble) and odd (high nibble)
input columns; two tensor-core dots accumulate in float32, and the tensor scale is applied at the end."""

import jax
import jax.numpy as jnp
import torch
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plgpu

BLOCK_N = 64  # weight rows (output features) per program
STEP_BLOCKS = 4  # NVFP4 blocks (16 values, 8 bytes) per step
NV_BLOCK = 16


def _params(num_warps, num_stages):
    make = getattr(plgpu, "CompilerParams", None) or getattr(plgpu, "TritonCompilerParams")
    return make(num_warps=num_warps, num_stages=num_stages)


def _e2m1(codes):
    """e2m1 codes (int32) to float32: 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives."""
    magnitude = codes & 7
    exponent = magnitude >> 1
    half = (magnitude & 1).astype(jnp.float32) * 0.5
    power = jnp.where(exponent == 1, 1.0, jnp.where(exponent == 2, 2.0, 4.0))
    value = jnp.where(exponent == 0, half, (1.0 + half) * power)
    return jnp.where((codes & 8) != 0, -value, value)


def _e4m3(codes):
    """fp8 e4m3fn bytes (int32) to float32; the scales are finite (at most 448), so no NaN codes occur."""
    sign = (codes >> 7) & 1
    exponent = (codes >> 3) & 0xF
    mantissa = codes & 0x7
    normal = jax.lax.bitcast_convert_type((sign << 31) | ((exponent + 120) << 23) | (mantissa << 20), jnp.float32)
    subnormal = jnp.where(sign == 1, -1.0, 1.0) * mantissa.astype(jnp.float32) * (2.0 ** -9)
    return jnp.where(exponent == 0, subnormal, normal)


def _kernel(x_ref, w_ref, s_ref, t_ref, o_ref):
    tokens = x_ref.shape[0]
    step_values = STEP_BLOCKS * NV_BLOCK // 2  # even (or odd) input columns per step

    def weights(codes, scale):
        return (_e2m1(codes) * scale[:, :, None]).astype(jnp.bfloat16).reshape(BLOCK_N, step_values)

    def step(i, acc):
        blocks = pl.ds(i * STEP_BLOCKS, STEP_BLOCKS)
        packed = w_ref[:, blocks, :].astype(jnp.int32)  # [BLOCK_N, STEP_BLOCKS, 8]
        scale = _e4m3(s_ref[:, blocks].astype(jnp.int32))  # [BLOCK_N, STEP_BLOCKS]
        even = x_ref[:, blocks, :, 0].reshape(tokens, step_values)
        odd = x_ref[:, blocks, :, 1].reshape(tokens, step_values)
        dims = (((1,), (1,)), ((), ()))
        acc = acc + jax.lax.dot_general(even, weights(packed & 15, scale), dims, preferred_element_type=jnp.float32)
        return acc + jax.lax.dot_general(odd, weights(packed >> 4, scale), dims, preferred_element_type=jnp.float32)

    acc = jax.lax.fori_loop(0, w_ref.shape[1] // STEP_BLOCKS, step, jnp.zeros((tokens, BLOCK_N), jnp.float32))
    o_ref[...] = (acc * t_ref[0]).astype(o_ref.dtype)


@jax.jit
def _nvfp4_gemm(x, w_packed, scale_bytes, tensor_scale):
    tokens, in_features = x.shape
    rows = w_packed.shape[0]
    blocks = in_features // NV_BLOCK
    x4 = x.reshape(tokens, blocks, NV_BLOCK // 2, 2)  # [token, block, byte, nibble]
    w3 = w_packed.reshape(rows, blocks, NV_BLOCK // 2)
    return pl.pallas_call(
        _kernel, out_shape=jax.ShapeDtypeStruct((tokens, rows), x.dtype), grid=(rows // BLOCK_N,),
        in_specs=[pl.BlockSpec(x4.shape, lambda n: (0, 0, 0, 0)),
                  pl.BlockSpec((BLOCK_N, blocks, NV_BLOCK // 2), lambda n: (n, 0, 0)),
                  pl.BlockSpec((BLOCK_N, blocks), lambda n: (n, 0)),
                  pl.BlockSpec((1,), lambda n: (0,))],
        out_specs=pl.BlockSpec((tokens, BLOCK_N), lambda n: (0, n)),
        compiler_params=_params(4, 3))(x4, w3, scale_bytes, tensor_scale)


def solve(x, w_packed, block_scales, tensor_scale):
    assert w_packed.shape[0] % BLOCK_N == 0 and x.shape[1] % (STEP_BLOCKS * NV_BLOCK) == 0
    j = lambda t: jax.dlpack.from_dlpack(t.contiguous())  # noqa: E731
    out = _nvfp4_gemm(j(x), j(w_packed), j(block_scales.view(torch.uint8)), j(tensor_scale.float()))
    return torch.from_dlpack(out)
