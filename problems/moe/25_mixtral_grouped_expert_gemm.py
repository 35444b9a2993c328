"""Grouped expert GEMM over variable per-expert token counts, tokens pre-sorted by expert (Mixtral-8x7B down projection, TP=2)."""

import torch

# Mixtral-8x7B expert down projection (w2) on one of two tensor-parallel GPUs: each of the 8 experts maps its
# 7168-wide half of the 14336 intermediate features back to the 4096-wide hidden state (the TP all-reduce follows
# elsewhere). A prefill batch of 4096 tokens with top-2 routing gives 8192 rows, already permuted into
# expert-sorted order: expert e owns rows expert_offsets[e] .. expert_offsets[e + 1] - 1 (counts vary per draw and
# are not multiples of any tile size; an expert may own very few rows).
#   out[r] = activations[r] @ w2[e].T   for every row r of expert e;  bf16 in, fp32 accumulate, bf16 out.
# numba stays below eager here (0.17x [0.17, 0.19] on an H100, 2026-12-06; 0.12x [0.11, 0.12] against eager's faster
# 1.7-2.0 ms in bench/results/suite-4dsl-h100-r3.md): eager runs the 481 GFLOP on tensor cores (3.1 ms then), while
# numba has no MMA instructions and runs them as float32 FMAs on the SIMT cores, whose H100 peak (~67 TFLOP/s) puts
# a floor of 7.2 ms under any numba solution; its solution, a 128 x 128 register-tiled grouped GEMM that reads the
# bf16 inputs in the kernel, reaches about 26-33 TFLOP/s (the one before it, which widened both inputs with torch
# every call, 0.03x).
# cuda stays below eager here (0.74x [0.66, 0.81] on an H100, 2026-12-07, bench/results/suite-4dsl-h100-r3.md): it
# loses on the device, 2.11 ms (228 TFLOP/s) against eager's 1.69 ms (285 TFLOP/s) for everything. Its tiles run
# Ampere's warp-level mma.sync (m16n8k16, ldmatrix loads), while eager's per-expert cuBLAS GEMMs can use Hopper's
# wgmma (inferred, not profiled). The grader before 10bf8b0753e6 timed eager at 3.1 ms and this kernel at 0.92x
# (bench/results/suite-4dsl-h100.md); the current one keeps the allocator's cache between draws, which we take to be
# what sped eager up (inferred). Triton reaches 1.19x [1.13, 1.25] with the same expert-segment tiling.
# pallas stays below eager here (0.60x [0.57, 0.63], same record): 1.51 ms on the device against eager's 1.34 ms, and
# 0.73 ms of JAX's per-call work outside it. Its row tiles are 64 high (Triton's 128); torch pads the 117 MB of
# activations with 64 zero rows (a copy), and a second kernel copies each output row (67 MB in all) out of its tile.
NUM_TOKENS = 4096
TOP_K = 2
NUM_ROWS = NUM_TOKENS * TOP_K
NUM_EXPERTS = 8
INTERMEDIATE_SHARD = 7168  # 14336 / 2
HIDDEN = 4096

MKB_META = {
    "category": "MatrixMultiply",
    "tags": ["gemm", "grouped_gemm", "routing"],
    "outliers": {"inputs": [0]},
    "flops": 481036337152,  # 2 * 8192 * 7168 * 4096
}


def make_inputs(device="cuda"):
    activations = torch.randn(NUM_ROWS, INTERMEDIATE_SHARD, device=device, dtype=torch.bfloat16)
    w2 = (torch.randn(NUM_EXPERTS, HIDDEN, INTERMEDIATE_SHARD, device=device) / INTERMEDIATE_SHARD**0.5).to(
        torch.bfloat16
    )
    popularity = torch.randn(NUM_EXPERTS, device=device) * 0.7
    router_logits = torch.randn(NUM_TOKENS, NUM_EXPERTS, device=device) + popularity
    topk_ids = router_logits.topk(TOP_K, dim=-1).indices
    counts = torch.bincount(topk_ids.reshape(-1), minlength=NUM_EXPERTS)
    expert_offsets = torch.zeros(NUM_EXPERTS + 1, dtype=torch.int32, device=device)
    expert_offsets[1:] = torch.cumsum(counts, dim=0).to(torch.int32)
    return [activations, w2, expert_offsets]


def reference(activations, w2, expert_offsets):
    out = torch.empty(activations.shape[0], w2.shape[1], dtype=activations.dtype, device=activations.device)
    bounds = expert_offsets.tolist()
    for expert in range(w2.shape[0]):
        start, end = bounds[expert], bounds[expert + 1]
        out[start:end] = torch.matmul(activations[start:end], w2[expert].t())
    return out
