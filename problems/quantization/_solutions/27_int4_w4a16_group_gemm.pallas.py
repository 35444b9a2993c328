"""JAX Pallas solution for 27_int4_w4a16_group_gemm: one program per 64 output columns walks the 112 quantisation
groups; for each it unpacks the group's 16 packed rows nibble position by nibble position (weight row k = 8 word +
position), dequantises them with the group's scale and zero point and multiplies them with the matching strided
columns of x (float32 dots at full precision, as the float32 reference)."""

import jax
import jax.numpy as jnp
import torch
from jax.experimental import pallas as pl

BLOCK_N = 64
NIBBLES_PER_WORD = 8
GROUP_SIZE = 128
WORDS_PER_GROUP = GROUP_SIZE // NIBBLES_PER_WORD


def _kernel(x_ref, q_ref, s_ref, z_ref, o_ref):
    tokens = x_ref.shape[0]

    def group(g, acc):
        words = q_ref[pl.ds(g * WORDS_PER_GROUP, WORDS_PER_GROUP), :]  # [16, BN] int32
        scale = s_ref[pl.ds(g, 1), :].astype(jnp.float32)  # [1, BN]
        zero = z_ref[pl.ds(g, 1), :].astype(jnp.float32)
        for p in range(NIBBLES_PER_WORD):
            weight = (((words >> (4 * p)) & 0xF).astype(jnp.float32) - zero) * scale  # rows k = 8 w + p
            x = x_ref[:, pl.ds(g * WORDS_PER_GROUP, WORDS_PER_GROUP), p].astype(jnp.float32)  # [M, 16]
            acc = acc + jnp.dot(x, weight, precision=jax.lax.Precision.HIGHEST, preferred_element_type=jnp.float32)
        return acc

    acc = jax.lax.fori_loop(0, s_ref.shape[0], group, jnp.zeros((tokens, BLOCK_N), jnp.float32))
    o_ref[...] = acc.astype(o_ref.dtype)


@jax.jit
def _w4a16(x, qweight, scales, zeros):
    tokens, in_features = x.shape
    words, out_features = qweight.shape
    groups = scales.shape[0]
    columns = lambda rows: pl.BlockSpec((rows, BLOCK_N), lambda j: (0, j))  # noqa: E731
    return pl.pallas_call(
        _kernel, out_shape=jax.ShapeDtypeStruct((tokens, out_features), x.dtype), grid=(out_features // BLOCK_N,),
        in_specs=[pl.BlockSpec((tokens, words, NIBBLES_PER_WORD), lambda j: (0, 0, 0)), columns(words),
                  columns(groups), columns(groups)],
        out_specs=pl.BlockSpec((tokens, BLOCK_N), lambda j: (0, j)),
    )(x.reshape(tokens, words, NIBBLES_PER_WORD), qweight, scales, zeros)


def solve(x, qweight, scales, zeros):
    assert qweight.shape[1] % BLOCK_N == 0 and x.shape[0] >= 16
    j = lambda t: jax.dlpack.from_dlpack(t.contiguous())  # noqa: E731
    return torch.from_dlpack(_w4a16(j(x), j(qweight), j(scales), j(zeros)))
