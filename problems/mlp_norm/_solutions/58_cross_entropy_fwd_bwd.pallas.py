"""JAX Pallas solution for 58_cross_entropy_fwd_bwd: the 151936-wide rows are seen as 1187 chunks of 128 (block
shapes must be powers of two). One program per token counts the labels that are not ignored (all 2048 of them sit in
one block), makes an online max/sum pass over its chunks, picks its label's logit from the label's chunk, writes its
loss / n and, in a second pass, the logit gradients; a second kernel sums the per-token losses."""

import jax
import jax.numpy as jnp
import torch
from jax.experimental import pallas as pl

CHUNK = 128
IGNORE_INDEX = -100


def _kernel(labels_ref, logits_ref, loss_ref, grad_ref):
    row = pl.program_id(0)
    labels = labels_ref[...]
    count = jnp.maximum(jnp.sum((labels != IGNORE_INDEX).astype(jnp.float32)), 1.0)
    label = labels_ref[row]
    counted = label != IGNORE_INDEX
    safe_label = jnp.where(counted, label, 0)
    chunks = logits_ref.shape[0]

    def online(c, carry):
        top, total = carry
        x = logits_ref[c, :].astype(jnp.float32)
        new_top = jnp.maximum(top, jnp.max(x))
        return new_top, total * jnp.exp(top - new_top) + jnp.sum(jnp.exp(x - new_top))

    top, total = jax.lax.fori_loop(0, chunks, online, (jnp.float32(-jnp.inf), jnp.float32(0.0)))
    log_z = top + jnp.log(total)
    lane = jax.lax.broadcasted_iota(jnp.int32, (CHUNK,), 0)
    label_chunk = logits_ref[safe_label // CHUNK, :].astype(jnp.float32)
    picked = jnp.sum(jnp.where(lane == safe_label % CHUNK, label_chunk, 0.0))
    scale = jnp.where(counted, 1.0 / count, 0.0)
    loss_ref[...] = jnp.full((1,), (log_z - picked) * scale, jnp.float32)

    def write(c, carry):
        x = logits_ref[c, :].astype(jnp.float32)
        value = jnp.exp(x - log_z) - jnp.where(c * CHUNK + lane == safe_label, 1.0, 0.0)
        grad_ref[c, :] = (value * scale).astype(grad_ref.dtype)
        return carry

    jax.lax.fori_loop(0, chunks, write, 0)


def _sum_kernel(losses_ref, loss_ref):
    loss_ref[...] = jnp.full((1,), jnp.sum(losses_ref[...]), jnp.float32)


@jax.jit
def _cross_entropy(logits, labels):
    tokens, vocab = logits.shape
    chunks = vocab // CHUNK
    rows = pl.BlockSpec((None, chunks, CHUNK), lambda t: (t, 0, 0))
    losses, grad = pl.pallas_call(
        _kernel, grid=(tokens,),
        out_shape=(jax.ShapeDtypeStruct((tokens, 1), jnp.float32),
                   jax.ShapeDtypeStruct((tokens, chunks, CHUNK), logits.dtype)),
        in_specs=[pl.BlockSpec((tokens,), lambda t: (0,)), rows],
        out_specs=(pl.BlockSpec((None, 1), lambda t: (t, 0)), rows),
    )(labels, logits.reshape(tokens, chunks, CHUNK))
    loss = pl.pallas_call(
        _sum_kernel, grid=(1,), out_shape=jax.ShapeDtypeStruct((1,), jnp.float32),
        in_specs=[pl.BlockSpec((tokens,), lambda i: (0,))], out_specs=pl.BlockSpec((1,), lambda i: (0,)),
    )(losses.reshape(tokens))
    return loss.reshape(()), grad.reshape(tokens, vocab)


def solve(logits, labels):
    assert logits.shape[1] % CHUNK == 0
    loss, grad = _cross_entropy(jax.dlpack.from_dlpack(logits.contiguous()),
                                jax.dlpack.from_dlpack(labels.to(torch.int32)))
    return torch.from_dlpack(loss), torch.from_dlpack(grad)
