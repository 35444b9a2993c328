"""JAX Pallas solution for 38_dsa_sparse_mla_decode: one program per (sequence, 32 heads) walks the sequence's 2048
selected slots in tiles of 32, gathering each tile's latent rows from the whole pool by their slot numbers. Scores are
a tensor-core dot over the 512 latent dims plus one over the 64 rope dims (bf16 in, float32 out); an online softmax
keeps the running max and sum, and the [32, 512] float32 accumulator takes p @ latent each tile. Padded slots (-1)
read row 0 and are masked out of the softmax."""

import jax
import jax.numpy as jnp
import torch
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plgpu

BLOCK_H = 32
BLOCK_N = 32
LATENT_DIM = 512
ROPE_DIM = 64
SOFTMAX_SCALE = 192**-0.5
NEG = -1e30


def _params(num_warps, num_stages):
    make = getattr(plgpu, "CompilerParams", None) or getattr(plgpu, "TritonCompilerParams")
    return make(num_warps=num_warps, num_stages=num_stages)


def _kernel(slots_ref, q_ref, kv_ref, o_ref):
    q_nope = q_ref[:, pl.ds(0, LATENT_DIM)]  # [BLOCK_H, 512] bf16
    q_pe = q_ref[:, pl.ds(LATENT_DIM, ROPE_DIM)]  # [BLOCK_H, 64]
    dims = (((1,), (1,)), ((), ()))

    def body(i, carry):
        top, total, acc = carry
        slots = slots_ref[pl.ds(i * BLOCK_N, BLOCK_N)]
        ok = slots >= 0
        rows = jnp.where(ok, slots, 0)
        k_nope = kv_ref[rows, pl.ds(0, LATENT_DIM)]  # [BLOCK_N, 512]
        k_pe = kv_ref[rows, pl.ds(LATENT_DIM, ROPE_DIM)]  # [BLOCK_N, 64]
        scores = (jax.lax.dot_general(q_nope, k_nope, dims, preferred_element_type=jnp.float32)
                  + jax.lax.dot_general(q_pe, k_pe, dims, preferred_element_type=jnp.float32))
        scores = jnp.where(ok[None, :], scores * SOFTMAX_SCALE, NEG)
        new_top = jnp.maximum(top, jnp.max(scores, axis=1))
        rescale = jnp.exp(top - new_top)
        weights = jnp.exp(scores - new_top[:, None])
        acc = acc * rescale[:, None] + jnp.dot(weights.astype(k_nope.dtype), k_nope,
                                               preferred_element_type=jnp.float32)
        return new_top, total * rescale + jnp.sum(weights, axis=1), acc

    start = (jnp.full((BLOCK_H,), NEG, jnp.float32), jnp.zeros((BLOCK_H,), jnp.float32),
             jnp.zeros((BLOCK_H, LATENT_DIM), jnp.float32))
    _, total, acc = jax.lax.fori_loop(0, slots_ref.shape[0] // BLOCK_N, body, start)
    o_ref[...] = (acc / total[:, None]).astype(o_ref.dtype)


@jax.jit
def _sparse_attend(q, latent, topk_slots):
    batch, heads, width = q.shape
    top_k = topk_slots.shape[1]
    return pl.pallas_call(
        _kernel, out_shape=jax.ShapeDtypeStruct((batch, heads, LATENT_DIM), q.dtype), grid=(batch, heads // BLOCK_H),
        in_specs=[pl.BlockSpec((None, top_k), lambda b, h: (b, 0)),
                  pl.BlockSpec((None, BLOCK_H, width), lambda b, h: (b, h, 0)),
                  pl.BlockSpec(latent.shape, lambda b, h: (0, 0))],
        out_specs=pl.BlockSpec((None, BLOCK_H, LATENT_DIM), lambda b, h: (b, h, 0)),
        compiler_params=_params(8, 2))(topk_slots, q, latent)


def solve(q, latent, topk_slots):
    assert q.shape[1] % BLOCK_H == 0 and topk_slots.shape[1] % BLOCK_N == 0
    assert q.shape[2] == LATENT_DIM + ROPE_DIM and latent.shape[1] == LATENT_DIM + ROPE_DIM
    j = lambda t: jax.dlpack.from_dlpack(t.contiguous())  # noqa: E731
    return torch.from_dlpack(_sparse_attend(j(q), j(latent), j(topk_slots.to(torch.int32))))
