"""Group-limited top-8 routing with sigmoid scores and a correction bias (DeepSeek-V3: 256 experts in 8 groups)."""

import torch

# DeepSeek-V3 routing ("noaux_tc") for a prefill chunk of 16384 tokens. The gate GEMM has already produced bf16
# logits for the 256 routed experts. Each score is sigmoid(logit); the selection uses score + correction_bias (a
# learned per-expert fp32 bias that balances load), the combine weights use the unbiased score:
#   1. the 256 experts form 8 groups of 32; a group's score is the sum of its two largest biased scores;
#   2. only the 4 best groups stay eligible;
#   3. the 8 experts with the largest biased scores among the 128 eligible ones are chosen, ordered by
#      descending biased score (torch.topk order);
#   4. weights = unbiased scores of the chosen experts / their sum * 2.5 (routed_scaling_factor).
# Outputs: weights [T, 8] in the logits' dtype and expert ids [T, 8] int32 (compared exactly).
# Ties: make_inputs redraws any token whose decisions are within TIE_MARGIN of a tie (4th vs 5th group score, and
# each adjacent pair among the 9 largest eligible biased scores), so any fp32 evaluation of sigmoid (accurate or
# fast exp) selects the same experts in the same order; no tie-breaking rule is needed.
NUM_TOKENS = 16384
NUM_EXPERTS = 256
NUM_GROUPS = 8
TOPK_GROUPS = 4
TOP_K = 8
ROUTED_SCALING = 2.5
TIE_MARGIN = 2e-5
MAX_REDRAWS = 64

MKB_META = {
    "category": "Reduce",
    "tags": ["topk", "routing", "reduction"],
    "outliers": False,  # random large logits would break the tie margins that make the expert ids well defined
}


def _wide(t):
    return t if t.dtype == torch.float64 else t.float()


def _select(scores, correction_bias):
    """Chosen expert ids [T, TOP_K] (descending biased score) and the sorted eligible biased scores [T, TOP_K+1]."""
    tokens = scores.shape[0]
    biased = scores + correction_bias.to(scores.dtype).unsqueeze(0)
    per_group = biased.view(tokens, NUM_GROUPS, NUM_EXPERTS // NUM_GROUPS)
    group_scores = per_group.topk(2, dim=-1).values.sum(dim=-1)  # [T, G]
    top_groups = group_scores.topk(TOPK_GROUPS, dim=-1).indices
    group_mask = torch.zeros_like(group_scores, dtype=torch.bool).scatter_(1, top_groups, True)
    expert_mask = group_mask.unsqueeze(-1).expand_as(per_group).reshape(tokens, NUM_EXPERTS)
    eligible = biased.masked_fill(~expert_mask, float("-inf"))
    best = eligible.topk(TOP_K + 1, dim=-1)
    return best.indices[:, :TOP_K], best.values, group_scores


def _near_ties(router_logits, correction_bias):
    """Tokens whose group or expert choice (or order) is within TIE_MARGIN of a tie, judged in float64."""
    scores = router_logits.double().sigmoid()
    _, values, group_scores = _select(scores, correction_bias.double())
    groups_sorted = group_scores.sort(dim=-1, descending=True).values
    group_gap = groups_sorted[:, TOPK_GROUPS - 1] - groups_sorted[:, TOPK_GROUPS]
    expert_gaps = (values[:, :-1] - values[:, 1:]).min(dim=-1).values
    return (group_gap < TIE_MARGIN) | (expert_gaps < TIE_MARGIN)


def make_inputs(device="cuda"):
    correction_bias = (torch.rand(NUM_EXPERTS, device=device) - 0.5) * 0.2
    router_logits = torch.randn(NUM_TOKENS, NUM_EXPERTS, device=device).to(torch.bfloat16)
    for _ in range(MAX_REDRAWS):
        redraw = _near_ties(router_logits, correction_bias)
        count = int(redraw.sum())
        if count == 0:
            break
        router_logits[redraw] = torch.randn(count, NUM_EXPERTS, device=device).to(torch.bfloat16)
    return [router_logits, correction_bias]


def reference(router_logits, correction_bias):
    scores = _wide(router_logits).sigmoid()  # [T, E]
    top_ids, _, _ = _select(scores, correction_bias)
    top_scores = scores.gather(1, top_ids)
    weights = top_scores / top_scores.sum(dim=-1, keepdim=True) * ROUTED_SCALING
    return weights.to(router_logits.dtype), top_ids.to(torch.int32)
