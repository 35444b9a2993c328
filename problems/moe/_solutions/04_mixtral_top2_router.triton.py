"""Triton solution for the Mixtral top-2 router: gate GEMM via an IEEE fp32 tl.dot, softmax, top-2, dense write in one kernel."""

import torch
import triton
import triton.language as tl

BLOCK_T = 32  # tokens per program (256 programs for 8192 tokens)
BLOCK_K = 128  # hidden features per step
BLOCK_E = 16  # experts padded to the smallest tl.dot width


@triton.jit
def _router_kernel(hidden_ptr, weight_ptr, out_ptr, num_tokens, hidden_size, num_experts,
                   BLOCK_T: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_E: tl.constexpr):
    tokens = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    experts = tl.arange(0, BLOCK_E)
    features = tl.arange(0, BLOCK_K)
    token_ok = tokens < num_tokens
    expert_ok = experts < num_experts
    acc = tl.zeros((BLOCK_T, BLOCK_E), dtype=tl.float32)
    for k in range(0, hidden_size, BLOCK_K):
        x = tl.load(hidden_ptr + tokens[:, None].to(tl.int64) * hidden_size + (k + features)[None, :],
                    mask=token_ok[:, None], other=0.0)
        w = tl.load(weight_ptr + experts[None, :] * hidden_size + (k + features)[:, None],
                    mask=expert_ok[None, :], other=0.0)  # [BLOCK_K, BLOCK_E]
        # fp16 values are exact in fp32; an IEEE fp32 dot (FMA, no tensor cores) sums them as the fp32 reference
        # does. A tensor-core fp16 dot's accumulation is coarser on Hopper and misses the allowance by ~2x.
        acc = tl.dot(x.to(tl.float32), w.to(tl.float32), acc, input_precision="ieee")
    logits = tl.where(expert_ok[None, :], acc, float("-inf"))
    # top-2 on the logits (softmax is monotone); ties go to the lower expert id, as torch.topk does in practice
    first = tl.argmax(logits, axis=1)
    is_first = experts[None, :] == first[:, None]
    top1 = tl.max(logits, axis=1)
    rest = tl.where(is_first, float("-inf"), logits)
    second = tl.argmax(rest, axis=1)
    is_second = experts[None, :] == second[:, None]
    top2 = tl.max(rest, axis=1)
    # renormalised softmax of the two winners: p1 / (p1 + p2) = 1 / (1 + exp(l2 - l1))
    row_max = top1
    denominator = tl.sum(tl.where(expert_ok[None, :], tl.exp(logits - row_max[:, None]), 0.0), axis=1)
    p1 = 1.0 / denominator
    p2 = tl.exp(top2 - row_max) / denominator
    w1 = p1 / (p1 + p2)
    w2 = p2 / (p1 + p2)
    dense = tl.where(is_first, w1[:, None], tl.where(is_second, w2[:, None], 0.0))
    tl.store(out_ptr + tokens[:, None] * num_experts + experts[None, :], dense,
             mask=token_ok[:, None] & expert_ok[None, :])


def solve(hidden, gate_weight):
    hidden = hidden.contiguous()
    gate_weight = gate_weight.contiguous()
    num_tokens, hidden_size = hidden.shape
    num_experts = gate_weight.shape[0]
    out = torch.empty(num_tokens, num_experts, dtype=torch.float32, device=hidden.device)
    grid = (triton.cdiv(num_tokens, BLOCK_T),)
    _router_kernel[grid](hidden, gate_weight, out, num_tokens, hidden_size, num_experts,
                         BLOCK_T=BLOCK_T, BLOCK_K=BLOCK_K, BLOCK_E=BLOCK_E, num_warps=4)
    return out
