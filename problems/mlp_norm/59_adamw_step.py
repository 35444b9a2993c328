"""AdamW optimizer step over a 268M-parameter float32 shard: new parameters and both moments (Llama-3-8B under FSDP)."""

import torch

# One torch.optim.AdamW step (lr 3e-4, betas (0.9, 0.95), eps 1e-8, weight decay 0.1, step 1000) over the
# flattened float32 shard of Llama-3-8B's 8.03 B parameters that one of 30 FSDP ranks owns, 2^28 elements:
#   p' = p * (1 - lr * wd);  m' = b1 * m + (1 - b1) * g;  v' = b2 * v + (1 - b2) * g^2
#   p'' = p' - (lr / (1 - b1^step)) * m' / (sqrt(v') / sqrt(1 - b2^step) + eps)
# The inputs take 4.3 GB (parameters, gradients and both moments, float32) and the outputs 3.2 GB; the step
# count is a plain int. Eager PyTorch (the for-each formula, unfused) makes about a dozen passes over 1 GB
# tensors: an estimated 8-12 ms on an H200, against about 2 ms for one fused pass.
NUM_PARAMS = 1 << 28
LR = 3e-4
BETA1 = 0.9
BETA2 = 0.95
ADAM_EPS = 1e-8
WEIGHT_DECAY = 0.1
STEP = 1000

MKB_META = {
    "category": "Optimizer",
    "tags": ["elementwise", "optimizer", "memory"],
    "outliers": {"inputs": [1]},  # the gradients; the moments keep their signs and the second moment stays >= 0
}


def make_inputs(device="cuda"):
    param = 0.02 * torch.randn(NUM_PARAMS, device=device)
    grad = 1e-3 * torch.randn(NUM_PARAMS, device=device)
    exp_avg = 1e-3 * torch.randn(NUM_PARAMS, device=device)
    exp_avg_sq = 1e-6 * torch.rand(NUM_PARAMS, device=device)
    return [param, grad, exp_avg, exp_avg_sq, STEP]


def reference(param, grad, exp_avg, exp_avg_sq, step):
    bias_correction1 = 1.0 - BETA1**step
    bias_correction2 = 1.0 - BETA2**step
    m = BETA1 * exp_avg + (1.0 - BETA1) * grad
    v = BETA2 * exp_avg_sq + (1.0 - BETA2) * grad * grad
    decayed = param * (1.0 - LR * WEIGHT_DECAY)
    denominator = torch.sqrt(v) / (bias_correction2**0.5) + ADAM_EPS
    new_param = decayed - (LR / bias_correction1) * m / denominator
    return new_param, m, v
