"""JAX Pallas solution for 53_gated_delta_chunk_wy_transform, blockwise (the shipped Triton solution's algorithm,
flash-linear-attention's solve_tril): one program per (head, 64-token chunk, sequence), heads fastest, the chunk
handled as four 16-token blocks. The ten non-zero 16 x 16 blocks of A = strictly-lower(beta k k^T exp(g_i - g_j))
come from bf16 tensor-core dots with fp32 accumulation; each diagonal block inverts as (I + A)^-1 =
(I - A)(I + A^2)(I + A^4)(I + A^8) (A^16 = 0), the off-diagonal blocks of T = (I + A)^-1 follow by block forward
substitution T_pq = -D_p sum_{q <= r < p} A_pr T_rq (full-precision fp32 dots); then u_p = sum_q T_pq diag(beta_q) v_q
and w_p = sum_q T_pq diag(beta_q e^g_q) k_q, each scaled T block split into bf16 high and low parts against the bf16
inputs as loaded. The shipped Pallas solution's 64-step row-by-row substitution over whole-chunk tiles is gone."""

import jax
import jax.numpy as jnp
import torch
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plgpu

CHUNK = 64
BLOCK = 16
EXACT = jax.lax.Precision.HIGHEST


def _params(num_warps, num_stages):
    make = getattr(plgpu, "CompilerParams", None) or getattr(plgpu, "TritonCompilerParams")
    return make(num_warps=num_warps, num_stages=num_stages)


def _dot32(x, y):
    return jnp.dot(x, y, precision=EXACT, preferred_element_type=jnp.float32)


def _a_block(ki, kj, beta_i, gi, gj, diagonal):
    """The (i, j) 16 x 16 block of A from the bf16 keys of block i and block j (j <= i)."""
    kk = jnp.dot(ki, kj.T, preferred_element_type=jnp.float32)
    if diagonal:
        row = jax.lax.broadcasted_iota(jnp.int32, (BLOCK, BLOCK), 0)
        col = jax.lax.broadcasted_iota(jnp.int32, (BLOCK, BLOCK), 1)
        lower = row > col
        decay = jnp.exp(jnp.where(lower, gi[:, None] - gj[None, :], 0.0))
        return jnp.where(lower, beta_i[:, None] * kk * decay, 0.0)
    return beta_i[:, None] * kk * jnp.exp(gi[:, None] - gj[None, :])  # gi <= gj: decay <= 1


def _inverse(a):
    """(I + a)^-1 for a strictly lower 16 x 16 tile."""
    row = jax.lax.broadcasted_iota(jnp.int32, (BLOCK, BLOCK), 0)
    col = jax.lax.broadcasted_iota(jnp.int32, (BLOCK, BLOCK), 1)
    t = jnp.where(row == col, 1.0, 0.0) - a
    power = _dot32(a, a)
    t = t + _dot32(t, power)
    power = _dot32(power, power)
    t = t + _dot32(t, power)
    power = _dot32(power, power)
    return t + _dot32(t, power)


def _apply(acc, t, scale, x):
    """acc + (t diag(scale)) x, the scaled t split into bf16 high + low parts; x is a bf16 16 x D tile."""
    y = t * scale[None, :]
    high = y.astype(jnp.bfloat16)
    low = (y - high.astype(jnp.float32)).astype(jnp.bfloat16)
    acc = acc + jnp.dot(high, x, preferred_element_type=jnp.float32)
    return acc + jnp.dot(low, x, preferred_element_type=jnp.float32)


def _kernel(k_ref, v_ref, beta_ref, g_ref, w_ref, u_ref):
    blocks = [pl.ds(p * BLOCK, BLOCK) for p in range(CHUNK // BLOCK)]
    k = [k_ref[rows, :] for rows in blocks]  # bf16 [16, D]
    beta = [beta_ref[rows].astype(jnp.float32) for rows in blocks]
    g = []
    carried = None
    for rows in blocks:  # the chunk-local cumulative log decay, block by block
        raw = g_ref[rows]
        local = jax.lax.cumsum(raw, axis=0)
        g.append(local if carried is None else local + carried)
        carried = jnp.sum(raw) if carried is None else carried + jnp.sum(raw)
    a = {}
    for p in range(len(blocks)):
        for q in range(p + 1):
            a[p, q] = _a_block(k[p], k[q], beta[p], g[p], g[q], p == q)
    d = [_inverse(a[p, p]) for p in range(len(blocks))]
    t = {}
    for p in range(len(blocks)):
        t[p, p] = d[p]
        for q in range(p - 1, -1, -1):  # T_pq = -D_p sum_{q <= r < p} A_pr T_rq, its T_rq known already
            s = _dot32(a[p, q], t[q, q])
            for r in range(q + 1, p):
                s = s + _dot32(a[p, r], t[r, q])
            t[p, q] = -_dot32(d[p], s)
    decayed = [beta[p] * jnp.exp(g[p]) for p in range(len(blocks))]
    for p, rows in enumerate(blocks):
        acc = jnp.zeros((BLOCK, k_ref.shape[1]), jnp.float32)
        for q in range(p + 1):
            acc = _apply(acc, t[p, q], decayed[q], k[q])
        w_ref[rows, :] = acc.astype(w_ref.dtype)
    v = [v_ref[rows, :] for rows in blocks]
    for p, rows in enumerate(blocks):
        acc = jnp.zeros((BLOCK, v_ref.shape[1]), jnp.float32)
        for q in range(p + 1):
            acc = _apply(acc, t[p, q], beta[q], v[q])
        u_ref[rows, :] = acc.astype(u_ref.dtype)


@jax.jit
def _wy(k, v, beta, g):
    batch, seq_len, heads, dim = k.shape
    rows = pl.BlockSpec((None, CHUNK, None, dim), lambda h, c, b: (b, c, h, 0))
    gates = pl.BlockSpec((None, CHUNK, None), lambda h, c, b: (b, c, h))
    return pl.pallas_call(
        _kernel, grid=(heads, seq_len // CHUNK, batch),
        out_shape=(jax.ShapeDtypeStruct(k.shape, k.dtype), jax.ShapeDtypeStruct(v.shape, v.dtype)),
        in_specs=[rows, rows, gates, gates], out_specs=(rows, rows),
        compiler_params=_params(4, 1))(k, v, beta, g)


def solve(k, v, beta, g):
    assert k.shape[1] % CHUNK == 0 and k.dtype == torch.bfloat16 and v.dtype == torch.bfloat16
    j = lambda t: jax.dlpack.from_dlpack(t.contiguous())  # noqa: E731
    w, u = _wy(j(k), j(v), j(beta), j(g))
    return torch.from_dlpack(w), torch.from_dlpack(u)
