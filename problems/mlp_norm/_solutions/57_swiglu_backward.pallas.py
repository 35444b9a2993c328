"""JAX Pallas solution for 57_swiglu_backward: the [gate | up] rows are seen as [tokens, 2, intermediate]; one program
per 8 x 1024 tile reads the gate, up and grad_h tiles once and writes both gradients into the same layout."""

import jax
import jax.numpy as jnp
import torch
from jax.experimental import pallas as pl

ROWS = 8
COLS = 1024


def _kernel(gate_up_ref, grad_h_ref, grad_ref):
    gate = gate_up_ref[:, 0, :].astype(jnp.float32)
    up = gate_up_ref[:, 1, :].astype(jnp.float32)
    dh = grad_h_ref[...].astype(jnp.float32)
    s = 1.0 / (1.0 + jnp.exp(-gate))
    grad_ref[:, 0, :] = (dh * up * s * (1.0 + gate * (1.0 - s))).astype(grad_ref.dtype)
    grad_ref[:, 1, :] = (dh * gate * s).astype(grad_ref.dtype)


@jax.jit
def _swiglu_backward(gate_up, grad_h):
    tokens, half = grad_h.shape
    pairs = gate_up.reshape(tokens, 2, half)
    pair_tile = pl.BlockSpec((ROWS, 2, COLS), lambda i, j: (i, 0, j))
    grad = pl.pallas_call(
        _kernel, out_shape=jax.ShapeDtypeStruct(pairs.shape, gate_up.dtype), grid=(tokens // ROWS, half // COLS),
        in_specs=[pair_tile, pl.BlockSpec((ROWS, COLS), lambda i, j: (i, j))], out_specs=pair_tile)(pairs, grad_h)
    return grad.reshape(gate_up.shape)


def solve(gate_up, grad_h):
    assert grad_h.shape[0] % ROWS == 0 and grad_h.shape[1] % COLS == 0
    return torch.from_dlpack(_swiglu_backward(jax.dlpack.from_dlpack(gate_up.contiguous()),
                                              jax.dlpack.from_dlpack(grad_h.contiguous())))
