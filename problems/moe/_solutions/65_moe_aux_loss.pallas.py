"""JAX Pallas solution for 65_moe_aux_loss: one program per 64 tokens takes the softmax of its rows and the top 8
experts (8 rounds of row argmax, lower expert id on a tie) and writes its per-expert probability sums and top-8
counts; a second kernel adds the programs' partial sums and combines fraction * mean probability into the loss."""

import jax
import jax.numpy as jnp
import torch
from jax.experimental import pallas as pl

TOKENS = 64
TOP_K = 8
AUX_COEF = 0.001
PARTS = 64  # partial rows the second kernel adds at a time


def _stats_kernel(logits_ref, probs_ref, counts_ref):
    x = logits_ref[...].astype(jnp.float32)  # [T, E]
    experts = x.shape[1]
    expert = jax.lax.broadcasted_iota(jnp.int32, x.shape, 1)
    e = jnp.exp(x - jnp.max(x, axis=1, keepdims=True))
    probs_ref[...] = jnp.sum(e / jnp.sum(e, axis=1, keepdims=True), axis=0)
    chosen = jnp.zeros(x.shape, jnp.float32)
    rest = x
    for _ in range(TOP_K):
        best = jnp.max(rest, axis=1, keepdims=True)
        first = jnp.min(jnp.where(rest == best, expert, experts), axis=1, keepdims=True)
        pick = expert == first
        chosen = chosen + jnp.where(pick, 1.0, 0.0)
        rest = jnp.where(pick, -jnp.inf, rest)
    counts_ref[...] = jnp.sum(chosen, axis=0)


def _loss_kernel(probs_ref, counts_ref, loss_ref, *, tokens):
    experts = probs_ref.shape[1]

    def body(i, sums):
        rows = pl.ds(i * PARTS, PARTS)
        return sums[0] + jnp.sum(probs_ref[rows, :], axis=0), sums[1] + jnp.sum(counts_ref[rows, :], axis=0)

    zeros = jnp.zeros((experts,), jnp.float32)
    prob_sums, counts = jax.lax.fori_loop(0, probs_ref.shape[0] // PARTS, body, (zeros, zeros))
    total = jnp.sum((counts / (tokens * TOP_K)) * (prob_sums / tokens))
    loss_ref[...] = jnp.full((1,), AUX_COEF * experts * total, jnp.float32)


@jax.jit
def _aux_loss(logits):
    tokens, experts = logits.shape
    programs = tokens // TOKENS
    part = pl.BlockSpec((None, experts), lambda i: (i, 0))
    part_shape = jax.ShapeDtypeStruct((programs, experts), jnp.float32)
    probs, counts = pl.pallas_call(
        _stats_kernel, grid=(programs,), out_shape=(part_shape, part_shape),
        in_specs=[pl.BlockSpec((TOKENS, experts), lambda i: (i, 0))], out_specs=(part, part))(logits)
    whole = pl.BlockSpec((programs, experts), lambda i: (0, 0))
    loss = pl.pallas_call(
        lambda p, c, o: _loss_kernel(p, c, o, tokens=tokens), grid=(1,),
        out_shape=jax.ShapeDtypeStruct((1,), jnp.float32), in_specs=[whole, whole],
        out_specs=pl.BlockSpec((1,), lambda i: (0,)))(probs, counts)
    return loss.reshape(())


def solve(logits):
    assert logits.shape[0] % (TOKENS * PARTS) == 0
    return torch.from_dlpack(_aux_loss(jax.dlpack.from_dlpack(logits.contiguous())))
