"""JAX Pallas solution for 04_mixtral_top2_router: one program per block of 16 tokens accumulates the 8 gate logits
over the hidden size in chunks of 512, then picks the top two experts and writes their renormalised softmax
weights into the dense [tokens, 8] output."""

import jax
import jax.numpy as jnp
import torch
from jax.experimental import pallas as pl

TOKENS = 16
CHUNK = 512
EXPERTS = 8


def _kernel(hidden_ref, gate_ref, dense_ref):
    hidden_size = hidden_ref.shape[1]
    expert = jax.lax.broadcasted_iota(jnp.int32, (TOKENS, EXPERTS), 1)

    def body(i, logits):
        x = hidden_ref[:, pl.ds(i * CHUNK, CHUNK)].astype(jnp.float32)  # [T, C]
        for e in range(EXPERTS):
            w = gate_ref[pl.ds(e, 1), pl.ds(i * CHUNK, CHUNK)].astype(jnp.float32)  # [1, C]
            part = jnp.sum(x * w, axis=1)  # [T]
            logits = logits + jnp.where(expert == e, part[:, None], 0.0)
        return logits

    logits = jax.lax.fori_loop(0, hidden_size // CHUNK, body, jnp.zeros((TOKENS, EXPERTS), jnp.float32))
    first_value = jnp.max(logits, axis=1)
    first = jnp.min(jnp.where(logits == first_value[:, None], expert, EXPERTS), axis=1)
    rest = jnp.where(expert == first[:, None], -jnp.inf, logits)
    second_value = jnp.max(rest, axis=1)
    second = jnp.min(jnp.where(rest == second_value[:, None], expert, EXPERTS), axis=1)
    # softmax(l)[a] / (softmax(l)[a] + softmax(l)[b]) = 1 / (1 + exp(l_b - l_a))
    w_first = 1.0 / (1.0 + jnp.exp(second_value - first_value))
    dense = jnp.where(expert == first[:, None], w_first[:, None], 0.0)
    dense = jnp.where(expert == second[:, None], (1.0 - w_first)[:, None], dense)
    dense_ref[...] = dense


@jax.jit
def _route(hidden, gate_weight):
    tokens, hidden_size = hidden.shape
    return pl.pallas_call(
        _kernel, out_shape=jax.ShapeDtypeStruct((tokens, EXPERTS), jnp.float32), grid=(tokens // TOKENS,),
        in_specs=[pl.BlockSpec((TOKENS, hidden_size), lambda i: (i, 0)),
                  pl.BlockSpec(gate_weight.shape, lambda i: (0, 0))],
        out_specs=pl.BlockSpec((TOKENS, EXPERTS), lambda i: (i, 0)))(hidden, gate_weight)


def solve(hidden, gate_weight):
    assert gate_weight.shape[0] == EXPERTS
    dense = _route(jax.dlpack.from_dlpack(hidden.contiguous()), jax.dlpack.from_dlpack(gate_weight.contiguous()))
    return torch.from_dlpack(dense)
