"""JAX Pallas candidate v2 for 35_mamba2_ssd_chunk_scan: v1's kernel (the chunked SSD form as the Triton solution
computes it: one program per (sequence, head) carries the [64, 128] float32 state through 64-token chunks, the decays a
float32 cumulative sum, the four products per chunk fp16 tensor-core dots with float32 accumulation) with one crossing
from torch into JAX instead of seven. Torch packs x, dt_raw, B, C and the float32 a, D and dt_bias (their bits, as
bf16 pairs) into one bf16 buffer with one torch.cat; inside the one jit the pieces come back out by slices (XLA copies:
21 MB for x, under 3 MB for the rest) and the float32 vectors by bitcasts."""

import functools

import jax
import jax.numpy as jnp
import torch
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plgpu

CHUNK = 64
LOW = jnp.float16  # tensor-core operands
TRANSPOSED_B = (((1,), (1,)), ((), ()))  # dot_general numbers for a @ b.T


def _params(num_warps, num_stages):
    make = getattr(plgpu, "CompilerParams", None) or getattr(plgpu, "TritonCompilerParams")
    return make(num_warps=num_warps, num_stages=num_stages)


def _kernel(x_ref, dt_ref, a_ref, b_ref, c_ref, d_ref, bias_ref, o_ref):
    head = pl.program_id(1)
    rate, skip, bias = a_ref[head], d_ref[head], bias_ref[head]
    i = jax.lax.broadcasted_iota(jnp.int32, (CHUNK, CHUNK), 0)
    j = jax.lax.broadcasted_iota(jnp.int32, (CHUNK, CHUNK), 1)
    causal = i >= j

    def body(chunk, state):
        rows = pl.ds(chunk * CHUNK, CHUNK)
        raw = dt_ref[rows].astype(jnp.float32) + bias  # [Q]
        dt = jnp.where(raw > 20.0, raw, jnp.log1p(jnp.exp(jnp.minimum(raw, 20.0))))  # softplus
        log_decay = dt * rate  # [Q], <= 0
        cum = jax.lax.cumsum(log_decay, axis=0)  # [Q]: sum over tokens <= i of the chunk
        total = jnp.sum(log_decay)
        x = x_ref[rows, :].astype(jnp.float32)  # [Q, P]
        b = b_ref[rows, :].astype(LOW)  # [Q, N]
        c = c_ref[rows, :].astype(LOW)
        segment = jnp.where(causal, cum[:, None] - cum[None, :], 0.0)  # sum over (j, i]: <= 0 where j <= i
        decay = jnp.where(causal, jnp.exp(segment), 0.0)
        scores = jax.lax.dot_general(c, b, TRANSPOSED_B, preferred_element_type=jnp.float32) * decay * dt[None, :]
        y = jnp.dot(scores.astype(LOW), x.astype(LOW), preferred_element_type=jnp.float32)  # [Q, P]
        carried = jax.lax.dot_general(c, state.astype(LOW), TRANSPOSED_B, preferred_element_type=jnp.float32)
        y = y + carried * jnp.exp(cum)[:, None] + skip * x
        o_ref[rows, :] = y.astype(o_ref.dtype)
        weights = dt * jnp.exp(total - cum)  # [Q]
        update = jnp.dot((x * weights[:, None]).astype(LOW).T, b, preferred_element_type=jnp.float32)  # [P, N]
        return state * jnp.exp(total) + update

    jax.lax.fori_loop(0, x_ref.shape[0] // CHUNK, body, jnp.zeros((x_ref.shape[1], b_ref.shape[1]), jnp.float32))


@functools.partial(jax.jit, static_argnames=("layout",))
def _ssd(packed, layout):
    batch, seq_len, heads, head_dim, states = layout
    sizes = [batch * seq_len * heads * head_dim, batch * seq_len * heads, batch * seq_len * states,
             batch * seq_len * states, 2 * heads, 2 * heads, 2 * heads]
    starts = [sum(sizes[:n]) for n in range(len(sizes))]
    piece = lambda n: jax.lax.slice(packed, (starts[n],), (starts[n] + sizes[n],))  # noqa: E731
    x = piece(0).reshape(batch, seq_len, heads, head_dim)
    dt_raw = piece(1).reshape(batch, seq_len, heads)
    b = piece(2).reshape(batch, seq_len, states)
    c = piece(3).reshape(batch, seq_len, states)
    a, d, dt_bias = (jax.lax.bitcast_convert_type(piece(n).reshape(heads, 2), jnp.float32) for n in (4, 5, 6))
    whole = lambda t: pl.BlockSpec(t.shape, lambda i, h: (0,) * t.ndim)  # noqa: E731
    rows = pl.BlockSpec((None, seq_len, None, head_dim), lambda i, h: (i, 0, h, 0))
    shared = pl.BlockSpec((None, seq_len, states), lambda i, h: (i, 0, 0))
    return pl.pallas_call(
        _kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), grid=(batch, heads),
        in_specs=[rows, pl.BlockSpec((None, seq_len, None), lambda i, h: (i, 0, h)), whole(a), shared, shared,
                  whole(d), whole(dt_bias)],
        out_specs=rows, compiler_params=_params(8, 2))(x, dt_raw, a, b, c, d, dt_bias)


def _pack(x, dt_raw, a, b, c, d, dt_bias):
    """One flat buffer of x's dtype: x, dt_raw, B, C, then the float32 a, D and dt_bias as their bits (two 16-bit
    halves each), in _ssd's order."""
    bits = lambda t: t.float().contiguous().view(x.dtype)  # noqa: E731
    return torch.cat([x.reshape(-1), dt_raw.reshape(-1), b.reshape(-1), c.reshape(-1), bits(a), bits(d),
                      bits(dt_bias)])


def solve(x, dt_raw, a, b, c, d, dt_bias):
    batch, seq_len, heads, head_dim = x.shape
    states = b.shape[2]
    assert seq_len % CHUNK == 0 and head_dim >= 16 and states >= 16
    assert x.dtype in (torch.bfloat16, torch.float16) and dt_raw.dtype == b.dtype == c.dtype == x.dtype
    out = _ssd(jax.dlpack.from_dlpack(_pack(x, dt_raw, a, b, c, d, dt_bias)),
               layout=(batch, seq_len, heads, head_dim, states))
    return torch.from_dlpack(out)
