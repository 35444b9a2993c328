"""JAX Pallas candidate v1 for 06_chunked_retention: the shipped tiling (one program per head and block of 32 value
columns walks the 64-token chunks, carrying its [128, 32] float32 slice of the state) with the four products per chunk
on the tensor cores, as the Triton solution does them: fp16 operands (the inputs' dtype), float32 accumulation. The
shipped kernel ran all four as float32 dots at Precision.HIGHEST, which the Triton lowering turns into FMA loops. The
decay factors, the masking and the state stay in float32; the state is rounded to the inputs' dtype only as an operand
of the queries x state product, and the decayed keys only as an operand of the state update."""

import jax
import jax.numpy as jnp
import torch
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plgpu

CHUNK = 64
COLUMNS = 32
TRANSPOSED_B = (((1,), (1,)), ((), ()))  # dot_general numbers for a @ b.T


def _params(num_warps, num_stages):
    make = getattr(plgpu, "CompilerParams", None) or getattr(plgpu, "TritonCompilerParams")
    return make(num_warps=num_warps, num_stages=num_stages)


def _kernel(decay_ref, q_ref, k_ref, v_ref, o_ref):
    dim = q_ref.shape[1]
    low = q_ref.dtype  # fp16 operands for the tensor cores
    log_decay = jnp.log(decay_ref[pl.program_id(0)])
    i = jax.lax.broadcasted_iota(jnp.int32, (CHUNK, CHUNK), 0)
    j = jax.lax.broadcasted_iota(jnp.int32, (CHUNK, CHUNK), 1)
    distance = (i - j).astype(jnp.float32)
    intra = jnp.where(i >= j, jnp.exp(log_decay * jnp.maximum(distance, 0.0)), 0.0)  # gamma^(i-j), causal
    index = jax.lax.broadcasted_iota(jnp.int32, (CHUNK, 1), 0).astype(jnp.float32)
    query_decay = jnp.exp(log_decay * (index + 1.0))  # gamma^(i+1): [C, 1]
    key_decay = jnp.exp(log_decay * (CHUNK - 1.0 - index))  # gamma^(C-1-j): [C, 1]
    chunk_decay = jnp.exp(log_decay * CHUNK)
    scale = dim**-0.5

    def body(c, state):
        rows = pl.ds(c * CHUNK, CHUNK)
        q = q_ref[rows, :].astype(jnp.float32) * scale  # [C, D] float32
        k = k_ref[rows, :]  # [C, D] fp16
        v = v_ref[rows, :]  # [C, COLUMNS] fp16
        scores = jax.lax.dot_general(q.astype(low), k, TRANSPOSED_B, preferred_element_type=jnp.float32) * intra
        out = jnp.dot(scores.astype(low), v, preferred_element_type=jnp.float32)
        out = out + jnp.dot((q * query_decay).astype(low), state.astype(low), preferred_element_type=jnp.float32)
        o_ref[rows, :] = out.astype(o_ref.dtype)
        keys = (k.astype(jnp.float32) * key_decay).astype(low)  # [C, D]
        return state * chunk_decay + jnp.dot(keys.T, v, preferred_element_type=jnp.float32)  # [D, COLUMNS]

    jax.lax.fori_loop(0, q_ref.shape[0] // CHUNK, body, jnp.zeros((dim, COLUMNS), jnp.float32))


@jax.jit
def _retention(q, k, v, decay):
    heads, seq_len, dim = q.shape
    rows = pl.BlockSpec((None, seq_len, dim), lambda h, c: (h, 0, 0))
    columns = pl.BlockSpec((None, seq_len, COLUMNS), lambda h, c: (h, 0, c))
    return pl.pallas_call(
        _kernel, out_shape=jax.ShapeDtypeStruct(q.shape, q.dtype), grid=(heads, dim // COLUMNS),
        in_specs=[pl.BlockSpec((heads,), lambda h, c: (0,)), rows, rows, columns], out_specs=columns,
        compiler_params=_params(4, 2),
    )(decay, q, k, v)


def solve(q, k, v, decay):
    batch, heads, seq_len, dim = q.shape
    assert batch == 1 and seq_len % CHUNK == 0 and dim % COLUMNS == 0
    assert q.dtype in (torch.float16, torch.bfloat16) and k.dtype == v.dtype == q.dtype
    j = lambda t: jax.dlpack.from_dlpack(t.contiguous().view(heads, seq_len, dim))  # noqa: E731
    out = _retention(j(q), j(k), j(v), jax.dlpack.from_dlpack(decay.float().contiguous()))
    return torch.from_dlpack(out).view(q.shape)
