#!/usr/bin/env python3
"""Runs candidate v1 of mlp_norm/17 (and the shipped numba solution) in numba's CUDA simulator on 3 tokens of the
problem's hidden size 4544 (the kernel's constants are tied to it), against the problem's reference on float64
copies of the inputs (the grader's anchor) and against its own float32 reference. For a host without a GPU.

Inputs as make_inputs draws them, plus edge rows: a token scaled by 1000, one whose three inputs cancel to near zero
(its normalisation divides by a small deviation), and values whose float32 sums sit exactly halfway between two
bf16 (round to nearest even must pick the even one). It prints, first, the bf16 rounding of _pack against torch's
cast on 22,000 float32 patterns (ties and the largest finite values among them); then per solution the max abs
error of each output against the anchor, the grader's allowance (3 x max(reference error, bf16 eps x max|anchor|)),
whether it passes, how many elements differ from the float32 reference's, and whether the inputs are unchanged.
Usage: /usr/bin/python3 simulate.py [shipped] [v1]"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from numba_simulator import REPO, load, simulate, solve_timed, worst_error  # noqa: E402  (turns the simulator on first)

import numpy as np  # noqa: E402
import torch  # noqa: E402

PROBLEM = os.path.join(REPO, "problems/mlp_norm/17_parallel_residual_layernorm.py")
SOLUTIONS = {
    "shipped": os.path.join(REPO, "problems/mlp_norm/_solutions/17_parallel_residual_layernorm.numba.py"),
    "v1": os.path.join(REPO, "bench/candidates/17/v1.numba.py"),
}
KERNELS = {"shipped": ["_residual_layernorm"], "v1": ["_residual_layernorm"]}
TOKENS = 3
BF16_EPS = 2.0 ** -7


def check_rounding(solution) -> int:
    """Mismatches of _pack's two halves against torch's float32 -> bf16 cast."""
    generator = np.random.default_rng(0)
    bits = generator.integers(0, 2 ** 32, 22000, dtype=np.uint64).astype(np.uint32)
    bits[:1000] = (bits[:1000] & 0xFFFF0000) | 0x8000  # exact ties
    bits[1000:2000] = (bits[1000:2000] & 0xFFFF0000) | 0x7FFF  # just below a tie
    bits[2000:2010] = [0x7F7FFFFF, 0xFF7FFFFF, 0x7F7F7FFF, 0, 0x80000000, 1, 0x00008000, 0x3F808000, 0x3F818000,
                       0x7F7F8000]
    values = bits.view(np.float32)
    finite = np.isfinite(values)
    want = torch.from_numpy(values.copy()).to(torch.bfloat16).view(torch.int16).numpy().astype(np.uint16)
    bad = 0
    pack = solution._pack.py_func
    for value, expected, ok in zip(values.tolist(), want.tolist(), finite.tolist()):
        if not ok:
            continue
        word = pack(np.float32(value), np.float32(value)) & 0xFFFFFFFF
        if (word & 0xFFFF) != expected or (word >> 16) != expected:
            bad += 1
    return bad


def make_inputs(problem):
    torch.manual_seed(0)
    hidden = problem.HIDDEN
    attention = torch.randn(TOKENS, hidden).to(torch.bfloat16)
    mlp = torch.randn(TOKENS, hidden).to(torch.bfloat16)
    residual = (0.5 + torch.randn(TOKENS, hidden)).to(torch.bfloat16)
    weight = (1.0 + 0.1 * torch.randn(hidden)).to(torch.bfloat16)
    bias = (0.1 * torch.randn(hidden)).to(torch.bfloat16)
    attention[1] = (attention[1].float() * 1000.0).to(torch.bfloat16)
    mlp[2] = (-attention[2].float() - residual[2].float() + 1e-3 * torch.randn(hidden)).to(torch.bfloat16)
    # halfway sums: 1 + 2^-8 is a tie between two bf16 (1 and 1 + 2^-7)
    residual[0, :64] = 1.0
    attention[0, :64] = 2.0 ** -8
    mlp[0, :64] = 0.0
    return [attention, mlp, residual, weight, bias]


def main() -> None:
    wanted = sys.argv[1:] or list(SOLUTIONS)
    problem = load(PROBLEM, "problem17")
    inputs = make_inputs(problem)
    anchor = problem.reference(*[t.double() for t in inputs])
    reference = problem.reference(*inputs)
    before = [t.clone() for t in inputs]
    limits = []
    for name, ref, anc in zip(("normed", "summed"), reference, anchor):
        ref_err = float((ref.double() - anc).abs().max())
        limits.append(3.0 * max(ref_err, BF16_EPS * float(anc.abs().max())))
        print(f"{name}: reference error {ref_err:.3g}, allowance {limits[-1]:.3g}")
    for tag in wanted:
        solution = load(SOLUTIONS[tag], tag)
        simulate(solution, *KERNELS[tag])
        if hasattr(solution, "_pack"):
            print(f"{tag}: bf16 rounding, mismatches against torch's cast: {check_rounding(solution)}")
        outs, seconds, untouched = solve_timed(solution, inputs, before)
        for name, out, ref, anc, limit in zip(("normed", "summed"), outs, reference, anchor, limits):
            worst = worst_error(out, anc)
            differ = int((out.float() != ref.float()).sum())
            print(f"{tag} {name}: {tuple(out.shape)} {out.dtype}, max abs error {worst:.3g} (allowance {limit:.3g}, "
                  f"passes {worst <= limit}), {differ} of {out.numel()} elements differ from the float32 reference")
        print(f"{tag}: inputs unchanged {untouched}, {seconds:.0f} s in the simulator")


if __name__ == "__main__":
    main()
