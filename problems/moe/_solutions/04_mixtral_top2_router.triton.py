"""Triton solution for the Mixtral top-2 router: gate GEMM accumulated in float64, top-2 and renormalised weights in one kernel."""

import torch
import triton
import triton.language as tl

BLOCK_T = 16  # tokens per program (512 programs for 8192 tokens)
BLOCK_K = 32  # hidden features per step
BLOCK_E = 8  # experts (Mixtral has 8; more are masked)


@triton.jit
def _router_kernel(hidden_ptr, weight_ptr, out_ptr, num_tokens, hidden_size, num_experts,
                   BLOCK_T: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_E: tl.constexpr):
    tokens = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    experts = tl.arange(0, BLOCK_E)
    features = tl.arange(0, BLOCK_K)
    token_ok = tokens < num_tokens
    expert_ok = experts < num_experts
    rows = tokens.to(tl.int64) * hidden_size
    # The gate GEMM is tiny (8 experts) and memory-bound, so it can afford float64: each lane keeps its own partial
    # sums and the lanes are added once at the end. A float32 chain of 4096 products in one accumulator drifts by
    # several ulps of the logits, which the renormalised weights magnify past the 3x-reference allowance.
    partial = tl.zeros((BLOCK_T, BLOCK_E, BLOCK_K), dtype=tl.float64)
    for k in range(0, hidden_size, BLOCK_K):
        feature_ok = (k + features) < hidden_size
        x = tl.load(hidden_ptr + rows[:, None] + (k + features)[None, :],
                    mask=token_ok[:, None] & feature_ok[None, :], other=0.0).to(tl.float64)
        w = tl.load(weight_ptr + experts[:, None] * hidden_size + (k + features)[None, :],
                    mask=expert_ok[:, None] & feature_ok[None, :], other=0.0).to(tl.float64)
        partial += x[:, None, :] * w[None, :, :]
    logits = tl.where(expert_ok[None, :], tl.sum(partial, axis=2), float("-inf"))  # [BLOCK_T, BLOCK_E]
    # top-2 (softmax is monotone); ties go to the lower expert id, as torch.topk does in practice
    first = tl.argmax(logits, axis=1)
    is_first = experts[None, :] == first[:, None]
    top1 = tl.max(logits, axis=1)
    rest = tl.where(is_first, float("-inf"), logits)
    second = tl.argmax(rest, axis=1)
    is_second = experts[None, :] == second[:, None]
    top2 = tl.max(rest, axis=1)
    # the renormalised softmax of the two winners: p1 / (p1 + p2) = 1 / (1 + exp(l2 - l1))
    ratio = tl.exp(top2 - top1)
    w1 = 1.0 / (1.0 + ratio)
    w2 = ratio / (1.0 + ratio)
    dense = tl.where(is_first, w1[:, None], tl.where(is_second, w2[:, None], 0.0))
    tl.store(out_ptr + tokens[:, None] * num_experts + experts[None, :], dense.to(tl.float32),
             mask=token_ok[:, None] & expert_ok[None, :])


def solve(hidden, gate_weight):
    hidden = hidden.contiguous()
    gate_weight = gate_weight.contiguous()
    num_tokens, hidden_size = hidden.shape
    num_experts = gate_weight.shape[0]
    assert num_experts <= BLOCK_E, "the kernel handles at most BLOCK_E experts"
    out = torch.empty(num_tokens, num_experts, dtype=torch.float32, device=hidden.device)
    grid = (triton.cdiv(num_tokens, BLOCK_T),)
    _router_kernel[grid](hidden, gate_weight, out, num_tokens, hidden_size, num_experts,
                         BLOCK_T=BLOCK_T, BLOCK_K=BLOCK_K, BLOCK_E=BLOCK_E, num_warps=4)
    return out
