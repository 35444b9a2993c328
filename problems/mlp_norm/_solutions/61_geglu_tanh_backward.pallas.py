"""JAX Pallas solution for 61_geglu_tanh_backward: one program per 8 x 1024 tile reads gate, up and grad_h once and
writes both gradients (one tanh per element serves gelu and its derivative)."""

import math

import jax
import jax.numpy as jnp
import torch
from jax.experimental import pallas as pl

ROWS = 8
COLS = 1024
GELU_C = math.sqrt(2.0 / math.pi)
GELU_A = 0.044715


def _kernel(gate_ref, up_ref, grad_h_ref, grad_gate_ref, grad_up_ref):
    x = gate_ref[...].astype(jnp.float32)
    dh = grad_h_ref[...].astype(jnp.float32)
    t = jnp.tanh(GELU_C * (x + GELU_A * x * x * x))
    derivative = 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * GELU_C * (1.0 + 3.0 * GELU_A * x * x)
    grad_gate_ref[...] = (dh * up_ref[...].astype(jnp.float32) * derivative).astype(grad_gate_ref.dtype)
    grad_up_ref[...] = (dh * 0.5 * x * (1.0 + t)).astype(grad_up_ref.dtype)


@jax.jit
def _geglu_backward(gate, up, grad_h):
    tokens, width = gate.shape
    tile = pl.BlockSpec((ROWS, COLS), lambda i, j: (i, j))
    out = jax.ShapeDtypeStruct(gate.shape, gate.dtype)
    return pl.pallas_call(_kernel, out_shape=(out, out), grid=(tokens // ROWS, width // COLS),
                          in_specs=[tile, tile, tile], out_specs=(tile, tile))(gate, up, grad_h)


def solve(gate, up, grad_h):
    assert gate.shape[0] % ROWS == 0 and gate.shape[1] % COLS == 0
    j = lambda t: jax.dlpack.from_dlpack(t.contiguous())  # noqa: E731
    grad_gate, grad_up = _geglu_backward(j(gate), j(up), j(grad_h))
    return torch.from_dlpack(grad_gate), torch.from_dlpack(grad_up)
