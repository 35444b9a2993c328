"""JAX Pallas solution for 22_deepseek_grouped_topk: one program per 16 tokens sees the scores as [tokens, 8 groups,
32 experts], takes sigmoid and biased scores, each group's top-two sum, the four best groups (ranked by how many
groups beat them), then the top 8 eligible experts by 8 rounds of argmax (descending biased score, lower id on a
tie) and their renormalised, scaled sigmoid weights."""

import jax
import jax.numpy as jnp
import torch
from jax.experimental import pallas as pl

TOKENS = 16
NUM_GROUPS = 8
GROUP_SIZE = 32
TOPK_GROUPS = 4
TOP_K = 8
ROUTED_SCALING = 2.5


def _kernel(logits_ref, bias_ref, weights_ref, ids_ref):
    shape = (TOKENS, NUM_GROUPS, GROUP_SIZE)
    scores = 1.0 / (1.0 + jnp.exp(-logits_ref[...].astype(jnp.float32)))
    biased = scores + bias_ref[...][None, :, :]
    lane = jax.lax.broadcasted_iota(jnp.int32, shape, 2)
    expert = jax.lax.broadcasted_iota(jnp.int32, shape, 1) * GROUP_SIZE + lane
    first = jnp.max(biased, axis=2)  # [T, G]
    first_lane = jnp.min(jnp.where(biased == first[:, :, None], lane, GROUP_SIZE), axis=2)
    second = jnp.max(jnp.where(lane == first_lane[:, :, None], -jnp.inf, biased), axis=2)
    group_scores = first + second
    group = jax.lax.broadcasted_iota(jnp.int32, (TOKENS, NUM_GROUPS), 1)
    better = jnp.zeros((TOKENS, NUM_GROUPS), jnp.int32)
    for j in range(NUM_GROUPS):
        other = jnp.sum(jnp.where(group == j, group_scores, 0.0), axis=1, keepdims=True)  # group j's score
        better = better + jnp.where((other > group_scores) | ((other == group_scores) & (j < group)), 1, 0)
    eligible = jnp.where((better < TOPK_GROUPS)[:, :, None], biased, -jnp.inf)
    slot = jax.lax.broadcasted_iota(jnp.int32, (TOKENS, TOP_K), 1)
    ids = jnp.zeros((TOKENS, TOP_K), jnp.int32)
    picked = jnp.zeros((TOKENS, TOP_K), jnp.float32)
    for k in range(TOP_K):
        best = jnp.max(jnp.max(eligible, axis=2), axis=1)  # [T]
        chosen = jnp.min(jnp.min(jnp.where(eligible == best[:, None, None], expert, NUM_GROUPS * GROUP_SIZE),
                                 axis=2), axis=1)
        hit = expert == chosen[:, None, None]
        score = jnp.sum(jnp.sum(jnp.where(hit, scores, 0.0), axis=2), axis=1)
        ids = jnp.where(slot == k, chosen[:, None], ids)
        picked = jnp.where(slot == k, score[:, None], picked)
        eligible = jnp.where(hit, -jnp.inf, eligible)
    weights_ref[...] = (picked / jnp.sum(picked, axis=1, keepdims=True) * ROUTED_SCALING).astype(weights_ref.dtype)
    ids_ref[...] = ids


@jax.jit
def _grouped_topk(router_logits, correction_bias):
    tokens = router_logits.shape[0]
    rows = pl.BlockSpec((TOKENS, TOP_K), lambda i: (i, 0))
    return pl.pallas_call(
        _kernel, grid=(tokens // TOKENS,),
        out_shape=(jax.ShapeDtypeStruct((tokens, TOP_K), router_logits.dtype),
                   jax.ShapeDtypeStruct((tokens, TOP_K), jnp.int32)),
        in_specs=[pl.BlockSpec((TOKENS, NUM_GROUPS, GROUP_SIZE), lambda i: (i, 0, 0)),
                  pl.BlockSpec((NUM_GROUPS, GROUP_SIZE), lambda i: (0, 0))],
        out_specs=(rows, rows),
    )(router_logits.reshape(tokens, NUM_GROUPS, GROUP_SIZE), correction_bias.reshape(NUM_GROUPS, GROUP_SIZE))


def solve(router_logits, correction_bias):
    assert router_logits.shape[0] % TOKENS == 0 and router_logits.shape[1] == NUM_GROUPS * GROUP_SIZE
    weights, ids = _grouped_topk(jax.dlpack.from_dlpack(router_logits.contiguous()),
                                 jax.dlpack.from_dlpack(correction_bias.float().contiguous()))
    return torch.from_dlpack(weights), torch.from_dlpack(ids)
