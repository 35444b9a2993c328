"""Triton solution for 59_adamw_step: one fused pass over the shard (read p, g, m, v once; write p, m, v once), the step's scalars folded on the host."""

import torch
import triton
import triton.language as tl

LR = 3e-4
BETA1 = 0.9
BETA2 = 0.95
ADAM_EPS = 1e-8
WEIGHT_DECAY = 0.1
BLOCK = 4096


@triton.jit
def _adamw_kernel(p_ptr, g_ptr, m_ptr, v_ptr, p_out, m_out, v_out, count, beta1, one_minus_beta1, beta2,
                  one_minus_beta2, decay, step_size, sqrt_bias_correction2, eps, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < count
    p = tl.load(p_ptr + offsets, mask=mask, other=0.0)
    g = tl.load(g_ptr + offsets, mask=mask, other=0.0)
    m = tl.load(m_ptr + offsets, mask=mask, other=0.0)
    v = tl.load(v_ptr + offsets, mask=mask, other=0.0)
    m = beta1 * m + one_minus_beta1 * g
    v = beta2 * v + one_minus_beta2 * g * g
    denominator = tl.sqrt(v) / sqrt_bias_correction2 + eps
    p = p * decay - step_size * m / denominator
    tl.store(p_out + offsets, p, mask=mask)
    tl.store(m_out + offsets, m, mask=mask)
    tl.store(v_out + offsets, v, mask=mask)


def solve(param, grad, exp_avg, exp_avg_sq, step):
    param, grad = param.contiguous(), grad.contiguous()
    exp_avg, exp_avg_sq = exp_avg.contiguous(), exp_avg_sq.contiguous()
    count = param.numel()
    new_param = torch.empty_like(param)
    new_m = torch.empty_like(param)
    new_v = torch.empty_like(param)
    step_size = LR / (1.0 - BETA1**step)
    sqrt_bias_correction2 = (1.0 - BETA2**step) ** 0.5
    _adamw_kernel[(triton.cdiv(count, BLOCK),)](param, grad, exp_avg, exp_avg_sq, new_param, new_m, new_v, count,
                                                BETA1, 1.0 - BETA1, BETA2, 1.0 - BETA2, 1.0 - LR * WEIGHT_DECAY,
                                                step_size, sqrt_bias_correction2, ADAM_EPS, BLOCK=BLOCK, num_warps=8)
    return new_param, new_m, new_v
