#!/usr/bin/env python3
"""Runs candidate v1 of moe/23 (and the shipped numba solution) in numba's CUDA simulator on a shrunken problem (48
tokens, hidden size 64, the problem's 60 experts and top 4), against the problem's reference: every output must be
equal, as the grader's comparison of integer and copied outputs asks. Routing as make_inputs draws it, plus a token
whose four experts are the last four (59 is the 60th expert: its first row sums all 59 counts before it), and
experts that no token picks (their offsets repeat). For a host without a GPU.
Usage: /usr/bin/python3 simulate.py [shipped] [v1]"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from numba_simulator import REPO, load, simulate, solve_timed  # noqa: E402  (turns the simulator on first)

import torch  # noqa: E402

PROBLEM = os.path.join(REPO, "problems/moe/23_moe_token_dispatch.py")
SOLUTIONS = {
    "shipped": os.path.join(REPO, "problems/moe/_solutions/23_moe_token_dispatch.numba.py"),
    "v1": os.path.join(REPO, "bench/candidates/23/v1.numba.py"),
}
KERNELS = {"shipped": ["_rank_within_expert", "_offsets", "_place"], "v1": ["_rank_within_expert", "_place"]}
TOKENS, HIDDEN = 48, 64


def make_inputs(problem):
    torch.manual_seed(0)
    hidden = torch.randn(TOKENS, HIDDEN).to(torch.bfloat16)
    popularity = torch.randn(problem.NUM_EXPERTS) * 0.7
    logits = torch.randn(TOKENS, problem.NUM_EXPERTS) + popularity
    topk_ids = logits.topk(problem.TOP_K, dim=-1).indices.to(torch.int32)
    topk_ids[5] = torch.tensor([59, 58, 57, 56], dtype=torch.int32)
    return [hidden, topk_ids]


def main() -> None:
    wanted = sys.argv[1:] or list(SOLUTIONS)
    problem = load(PROBLEM, "problem23")
    inputs = make_inputs(problem)
    reference = problem.reference(*inputs)
    before = [t.clone() for t in inputs]
    unused = problem.NUM_EXPERTS - int(torch.unique(inputs[1]).numel())
    print(f"{TOKENS} tokens, {unused} of {problem.NUM_EXPERTS} experts picked by none")
    for tag in wanted:
        solution = load(SOLUTIONS[tag], tag)
        simulate(solution, *KERNELS[tag])
        outs, seconds, untouched = solve_timed(solution, inputs, before)
        for name, out, ref in zip(("permuted_hidden", "sorted_slots", "expert_offsets"), outs, reference):
            same = out.shape == ref.shape and out.dtype == ref.dtype and torch.equal(out, ref)
            print(f"{tag} {name}: {tuple(out.shape)} {out.dtype}, equal to the reference's {same}")
        print(f"{tag}: inputs unchanged {untouched}, {seconds:.0f} s in the simulator")


if __name__ == "__main__":
    main()
