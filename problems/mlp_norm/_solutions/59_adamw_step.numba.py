"""numba-cuda solution for 59_adamw_step: one fused grid-stride pass reads parameter, gradient and both moments once
and writes the new parameter and moments (the reference's operation order, float32); the bias corrections are host
scalars of the step count."""

import math

import torch
from numba import cuda, float32

THREADS = 256
LR = 3e-4
BETA1 = 0.9
BETA2 = 0.95
ADAM_EPS = 1e-8
WEIGHT_DECAY = 0.1


@cuda.jit
def _adamw(param, grad, exp_avg, exp_avg_sq, new_param, new_avg, new_avg_sq, step_size, sqrt_correction2):
    for i in range(cuda.grid(1), param.shape[0], cuda.gridsize(1)):
        g = grad[i]
        m = float32(BETA1) * exp_avg[i] + float32(1.0 - BETA1) * g
        v = float32(BETA2) * exp_avg_sq[i] + float32(1.0 - BETA2) * g * g
        decayed = param[i] * float32(1.0 - LR * WEIGHT_DECAY)
        denominator = math.sqrt(v) / sqrt_correction2 + float32(ADAM_EPS)
        new_param[i] = decayed - step_size * m / denominator
        new_avg[i] = m
        new_avg_sq[i] = v


def solve(param, grad, exp_avg, exp_avg_sq, step):
    outs = [torch.empty_like(param) for _ in range(3)]
    step_size = LR / (1.0 - BETA1**step)
    sqrt_correction2 = (1.0 - BETA2**step) ** 0.5
    _adamw[132 * 32, THREADS](param.contiguous(), grad.contiguous(), exp_avg.contiguous(), exp_avg_sq.contiguous(),
                              *outs, float32(step_size), float32(sqrt_correction2))
    return tuple(outs)
