"""JAX Pallas solution for 29_fp8_block_scaled_gemm: one program per 64 x 128 output tile walks the 128-wide inner
blocks; each block's fp8 e4m3 codes (passed as bytes) are decoded from their bit fields into bf16 (every e4m3 value
is exact in bf16), multiplied on the tensor cores with float32 accumulation and added in with the block's activation
and weight scales."""

import jax
import jax.numpy as jnp
import torch
from jax.experimental import pallas as pl

BLOCK_M = 64
BLOCK = 128


def _decode_e4m3(codes):
    """fp8 e4m3fn bytes (as int32) to float32; the codes are saturated to +-448, so no NaN codes occur."""
    sign = (codes >> 7) & 1
    exponent = (codes >> 3) & 0xF
    mantissa = codes & 0x7
    normal = jax.lax.bitcast_convert_type((sign << 31) | ((exponent + 120) << 23) | (mantissa << 20), jnp.float32)
    subnormal = jnp.where(sign == 1, -1.0, 1.0) * mantissa.astype(jnp.float32) * (2.0 ** -9)
    return jnp.where(exponent == 0, subnormal, normal)


def _kernel(a_ref, sa_ref, b_ref, sb_ref, o_ref):
    n_block = pl.program_id(1)

    def body(kb, acc):
        a = _decode_e4m3(a_ref[:, pl.ds(kb * BLOCK, BLOCK)].astype(jnp.int32)).astype(jnp.bfloat16)  # [BM, 128]
        b = _decode_e4m3(b_ref[:, pl.ds(kb * BLOCK, BLOCK)].astype(jnp.int32)).astype(jnp.bfloat16)  # [128, 128]
        part = jax.lax.dot_general(a, b, (((1,), (1,)), ((), ())), preferred_element_type=jnp.float32)
        return acc + part * sa_ref[:, kb][:, None] * sb_ref[n_block, kb]

    acc = jax.lax.fori_loop(0, a_ref.shape[1] // BLOCK, body, jnp.zeros((BLOCK_M, BLOCK), jnp.float32))
    o_ref[...] = acc.astype(o_ref.dtype)


@jax.jit
def _gemm(a_bytes, a_scales, b_bytes, b_scales):
    m, k = a_bytes.shape
    n = b_bytes.shape[0]
    return pl.pallas_call(
        _kernel, out_shape=jax.ShapeDtypeStruct((m, n), jnp.bfloat16), grid=(m // BLOCK_M, n // BLOCK),
        in_specs=[pl.BlockSpec((BLOCK_M, k), lambda i, j: (i, 0)),
                  pl.BlockSpec((BLOCK_M, k // BLOCK), lambda i, j: (i, 0)),
                  pl.BlockSpec((BLOCK, k), lambda i, j: (j, 0)),
                  pl.BlockSpec(b_scales.shape, lambda i, j: (0, 0))],
        out_specs=pl.BlockSpec((BLOCK_M, BLOCK), lambda i, j: (i, j)),
    )(a_bytes, a_scales, b_bytes, b_scales)


def solve(a, a_scales, b, b_scales):
    assert a.shape[0] % BLOCK_M == 0 and b.shape[0] % BLOCK == 0 and a.shape[1] % BLOCK == 0
    j = lambda t: jax.dlpack.from_dlpack(t.contiguous())  # noqa: E731
    return torch.from_dlpack(_gemm(j(a.view(torch.uint8)), j(a_scales.float()), j(b.view(torch.uint8)),
                                   j(b_scales.float())))
