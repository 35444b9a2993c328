"""Top-2 mixture-of-experts router: gate projection, softmax, top-2 selection and renormalised dense weights (Mixtral-8x7B)."""

import torch

# Mixtral-8x7B routing for a prefill batch of 8192 tokens: hidden size 4096, 8 experts, 2 experts per token.
# The router logits come from a bias-free linear layer; the softmax probabilities of the two chosen experts are
# renormalised to sum to 1 and written into a dense [tokens, experts] matrix (zeros for unchosen experts).
# Ties: make_inputs redraws any token whose 2nd and 3rd largest logits lie within TIE_MARGIN (judged in float64),
# so every fp32 evaluation of the gate GEMM, whatever its summation order, chooses the same two experts.
# pallas stays below eager here (0.42x [0.41, 0.43] on an H100, 2026-12-06): eager takes 0.38 ms in all, while JAX's
# per-call host work around the jitted pallas_call and its 2 DLPack imports takes 0.74 ms outside the device (its
# kernel: 0.165 ms of device time, Triton's 0.115 ms). The cheapest Pallas round trip measured in the suite (problem
# 18: one import, one export) already spends 0.49 ms outside the device, so no Pallas kernel can reach eager
# (inferred).
# bench/results/suite-4dsl-h100-r3.md (grader 10bf8b0753e6, another H100): 0.42x [0.40, 0.44], 0.15 ms on the device
# and 0.50 ms outside it, against eager's 0.27 ms.
NUM_TOKENS = 8192
HIDDEN = 4096
NUM_EXPERTS = 8
TOP_K = 2
TIE_MARGIN = 1e-4
MAX_REDRAWS = 16

MKB_META = {
    "category": "Fusion",
    "tags": ["gemm_epilogue", "topk", "routing"],
}


def _wide(t):
    return t if t.dtype == torch.float64 else t.float()


def _near_ties(hidden, gate_weight):
    """Tokens whose choice of the top-2 experts is within TIE_MARGIN of a tie."""
    logits = torch.matmul(hidden.double(), gate_weight.double().t())
    ordered = logits.sort(dim=-1, descending=True).values
    return (ordered[:, TOP_K - 1] - ordered[:, TOP_K]) < TIE_MARGIN


def make_inputs(device="cuda"):
    hidden = torch.randn(NUM_TOKENS, HIDDEN, device=device, dtype=torch.float16)
    gate_weight = (torch.randn(NUM_EXPERTS, HIDDEN, device=device) / HIDDEN**0.5).to(torch.float16)
    for _ in range(MAX_REDRAWS):
        redraw = _near_ties(hidden, gate_weight)
        count = int(redraw.sum())
        if count == 0:
            break
        hidden[redraw] = torch.randn(count, HIDDEN, device=device, dtype=torch.float16)
    return [hidden, gate_weight]


def reference(hidden, gate_weight):
    logits = torch.matmul(_wide(hidden), _wide(gate_weight).t())  # [T, E]
    probabilities = torch.softmax(logits, dim=-1)
    top_weights, top_experts = torch.topk(probabilities, TOP_K, dim=-1)
    top_weights = top_weights / top_weights.sum(dim=-1, keepdim=True)
    dense = torch.zeros_like(probabilities)
    dense.scatter_(1, top_experts, top_weights)
    return dense
