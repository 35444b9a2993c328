"""JAX Pallas solution for 59_adamw_step: one fused pass, one program per 4096 elements, reads parameter, gradient and
both moments once and writes the new parameter and moments; the bias corrections are compile-time constants of the
step count (a static argument of the jitted function)."""

import functools

import jax
import jax.numpy as jnp
import torch
from jax.experimental import pallas as pl

BLOCK = 4096
LR = 3e-4
BETA1 = 0.9
BETA2 = 0.95
ADAM_EPS = 1e-8
WEIGHT_DECAY = 0.1


def _kernel(p_ref, g_ref, m_ref, v_ref, new_p_ref, new_m_ref, new_v_ref, *, step_size, sqrt_correction2):
    g = g_ref[...]
    m = BETA1 * m_ref[...] + (1.0 - BETA1) * g
    v = BETA2 * v_ref[...] + (1.0 - BETA2) * g * g
    decayed = p_ref[...] * (1.0 - LR * WEIGHT_DECAY)
    new_p_ref[...] = decayed - step_size * m / (jnp.sqrt(v) / sqrt_correction2 + ADAM_EPS)
    new_m_ref[...] = m
    new_v_ref[...] = v


@functools.partial(jax.jit, static_argnames=("step",))
def _adamw(param, grad, exp_avg, exp_avg_sq, step):
    kernel = functools.partial(_kernel, step_size=LR / (1.0 - BETA1**step),
                               sqrt_correction2=(1.0 - BETA2**step) ** 0.5)
    spec = pl.BlockSpec((BLOCK,), lambda i: (i,))
    out = jax.ShapeDtypeStruct(param.shape, param.dtype)
    return pl.pallas_call(kernel, out_shape=(out, out, out), grid=(param.shape[0] // BLOCK,),
                          in_specs=[spec] * 4, out_specs=(spec, spec, spec))(param, grad, exp_avg, exp_avg_sq)


def solve(param, grad, exp_avg, exp_avg_sq, step):
    assert param.shape[0] % BLOCK == 0
    j = lambda t: jax.dlpack.from_dlpack(t.contiguous())  # noqa: E731
    return tuple(torch.from_dlpack(t) for t in _adamw(j(param), j(grad), j(exp_avg), j(exp_avg_sq), step=int(step)))
