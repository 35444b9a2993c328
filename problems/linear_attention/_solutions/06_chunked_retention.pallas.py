"""JAX Pallas candidate v2 for 06_chunked_retention: v1's kernel (the shipped tiling with the four products per chunk on
the tensor cores: fp16 operands, float32 accumulation, float32 state and decays) with one crossing from torch into JAX
instead of four. Torch packs the queries, keys and values and the float32 decays (their bits, as fp16 pairs, repeated
to fill one row of head_dim) into one fp16 buffer with one torch.cat, seen as rows of head_dim; the kernel reads its
query, key and value rows straight from that buffer through its block index maps (no XLA copy), and the decays come
back out of the last row by a slice and a bitcast."""

import functools

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


@functools.partial(jax.jit, static_argnames=("heads",))
def _retention(packed, heads):
    """packed: [3 heads seq_len + 1, dim] fp16 rows: the queries, keys and values of every head (heads x seq_len rows
    each), then one row holding the float32 decays' bits, repeated."""
    total_rows, dim = packed.shape
    seq_len = (total_rows - 1) // (3 * heads)
    last = jax.lax.slice(packed, (total_rows - 1, 0), (total_rows, dim)).reshape(dim // 2, 2)
    decay = jax.lax.bitcast_convert_type(last, jnp.float32)  # [dim // 2]: decay[h] for h < heads
    rows = lambda first: pl.BlockSpec((seq_len, dim), lambda h, c: (first + h, 0))  # noqa: E731
    columns = pl.BlockSpec((None, seq_len, COLUMNS), lambda h, c: (h, 0, c))
    return pl.pallas_call(
        _kernel, out_shape=jax.ShapeDtypeStruct((heads, seq_len, dim), packed.dtype), grid=(heads, dim // COLUMNS),
        in_specs=[pl.BlockSpec((dim // 2,), lambda h, c: (0,)), rows(0), rows(heads),
                  pl.BlockSpec((seq_len, COLUMNS), lambda h, c: (2 * heads + h, c))],
        out_specs=columns, compiler_params=_params(4, 2),
    )(decay, packed, packed, packed)


def _pack(q, k, v, decay):
    """One fp16 buffer [3 heads seq_len + 1, dim]: q, k and v as rows of dim, then the decays' float32 bits (two
    16-bit halves each), repeated to fill the last row."""
    batch, heads, seq_len, dim = q.shape
    bits = decay.float().contiguous().view(q.dtype)  # [2 heads]
    pieces = [q.reshape(-1), k.reshape(-1), v.reshape(-1)] + [bits] * (dim // (2 * heads))
    return torch.cat(pieces).view(3 * heads * seq_len + 1, dim)


def solve(q, k, v, decay):
    batch, heads, seq_len, dim = q.shape
    assert batch == 1 and seq_len % CHUNK == 0 and dim % COLUMNS == 0 and dim % (2 * heads) == 0
    assert q.dtype in (torch.float16, torch.bfloat16) and k.dtype == v.dtype == q.dtype and decay.numel() == heads
    out = _retention(jax.dlpack.from_dlpack(_pack(q, k, v, decay)), heads=heads)
    return torch.from_dlpack(out).view(q.shape)
