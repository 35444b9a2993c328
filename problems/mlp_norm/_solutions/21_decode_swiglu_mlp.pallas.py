"""JAX Pallas solution for 21_decode_swiglu_mlp: the first kernel gives each program 64 intermediate columns, runs
both its gate and its up projection on the tensor cores over blocks of 256 of the hidden size, rounds them to bf16
(as the reference's projection output) and writes silu(gate) * up; the second kernel is the down projection, 32
output columns per program."""

import jax
import jax.numpy as jnp
import torch
from jax.experimental import pallas as pl

BLOCK_N_UP = 64
BLOCK_N_DOWN = 32
BLOCK_K = 256


def _dot_rows(a_ref, w_ref, block_n):
    """a [M, K] times w [N, K]^T over blocks of K, float32 accumulation."""
    def body(i, acc):
        a = a_ref[:, pl.ds(i * BLOCK_K, BLOCK_K)]
        w = w_ref[:, pl.ds(i * BLOCK_K, BLOCK_K)]
        return acc + jax.lax.dot_general(a, w, (((1,), (1,)), ((), ())), preferred_element_type=jnp.float32)

    return jax.lax.fori_loop(0, a_ref.shape[1] // BLOCK_K, body, jnp.zeros((a_ref.shape[0], block_n), jnp.float32))


def _gate_up_kernel(x_ref, gate_w_ref, up_w_ref, hidden_ref):
    gate = _dot_rows(x_ref, gate_w_ref, BLOCK_N_UP).astype(x_ref.dtype).astype(jnp.float32)
    up = _dot_rows(x_ref, up_w_ref, BLOCK_N_UP).astype(x_ref.dtype).astype(jnp.float32)
    hidden_ref[...] = (gate / (1.0 + jnp.exp(-gate)) * up).astype(hidden_ref.dtype)


def _down_kernel(hidden_ref, w_ref, o_ref):
    o_ref[...] = _dot_rows(hidden_ref, w_ref, BLOCK_N_DOWN).astype(o_ref.dtype)


@jax.jit
def _mlp(x, gate_up_weight, down_weight):
    tokens, hidden_size = x.shape
    intermediate = gate_up_weight.shape[0] // 2
    up_offset = intermediate // BLOCK_N_UP
    hidden = pl.pallas_call(
        _gate_up_kernel, out_shape=jax.ShapeDtypeStruct((tokens, intermediate), x.dtype),
        grid=(intermediate // BLOCK_N_UP,),
        in_specs=[pl.BlockSpec((tokens, hidden_size), lambda j: (0, 0)),
                  pl.BlockSpec((BLOCK_N_UP, hidden_size), lambda j: (j, 0)),
                  pl.BlockSpec((BLOCK_N_UP, hidden_size), lambda j: (j + up_offset, 0))],
        out_specs=pl.BlockSpec((tokens, BLOCK_N_UP), lambda j: (0, j)))(x, gate_up_weight, gate_up_weight)
    return pl.pallas_call(
        _down_kernel, out_shape=jax.ShapeDtypeStruct((tokens, hidden_size), x.dtype),
        grid=(hidden_size // BLOCK_N_DOWN,),
        in_specs=[pl.BlockSpec((tokens, intermediate), lambda j: (0, 0)),
                  pl.BlockSpec((BLOCK_N_DOWN, intermediate), lambda j: (j, 0))],
        out_specs=pl.BlockSpec((tokens, BLOCK_N_DOWN), lambda j: (0, j)))(hidden, down_weight)


def solve(x, gate_up_weight, down_weight):
    j = lambda t: jax.dlpack.from_dlpack(t.contiguous())  # noqa: E731
    return torch.from_dlpack(_mlp(j(x), j(gate_up_weight), j(down_weight)))
