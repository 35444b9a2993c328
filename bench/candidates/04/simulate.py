#!/usr/bin/env python3
"""Runs the shipped numba solution of moe/04 and candidates v1, v2 in numba's CUDA simulator on a shrunken problem,
against the problem's reference run on float64 copies of the inputs (the grader's anchor). For a host without a GPU.

Shrunken problem: 21 tokens (the last warp has one token, the second block two idle warps), hidden size 384 (three
steps of a lane's word loop, so the one-step-ahead loads run, stop and are used), 8 experts as in the problem (the
kernels' lane layout is tied to them). Inputs as make_inputs draws them (near ties redrawn with the problem's own
_near_ties), plus edge values: a token scaled by 1000, a token of fp16 subnormals times a gate row scaled up, gate
weights of +-65504 (the largest fp16: its 2^112-scaled float32 must not overflow) and of fp16 subnormals. torch.empty
fills its tensors with NaN, so nothing can pass on memory that already held the answer.

Prints, first, the candidates' fp16 widening (_low, _high) against torch's fp16 -> float32 cast times 2^-112 on all
63488 finite fp16 bit patterns in both halves of a word; then per solution the max abs error of its output against
the float64 anchor, the grader's allowance (3 x max(reference error, float32 eps x max|anchor|), the reference being
the problem's own float32 math), whether it passes, whether the chosen experts match the anchor's, and whether the
inputs are unchanged. The simulator reads numpy arrays, so each launch gets numpy views of the (CPU) tensors; warp
shuffles (a per-warp barrier and exchange) and libdevice's bit casts (numpy views) are stood in by Python.
Usage: /usr/bin/python3 simulate.py [shipped] [v1] [v2]"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from numba_simulator import REPO, load, simulate, solve_timed, worst_error  # noqa: E402  (turns the simulator on first)

import numpy as np  # noqa: E402
import torch  # noqa: E402

PROBLEM = os.path.join(REPO, "problems/moe/04_mixtral_top2_router.py")
SOLUTIONS = {
    "shipped": os.path.join(REPO, "problems/moe/_solutions/04_mixtral_top2_router.numba.py"),
    "v1": os.path.join(REPO, "bench/candidates/04/v1.numba.py"),
    "v2": os.path.join(REPO, "bench/candidates/04/v2.numba.py"),
}
TOKENS, HIDDEN = 21, 384


def shrink(solution) -> None:
    """The kernel given numpy views of the tensors; libdevice stood in; torch.empty garbage-filled."""
    simulate(solution, "_router")
    if hasattr(solution, "_launches"):
        solution._launches.clear()


def check_widening(solution) -> int:
    """Mismatches of _low / _high against torch's cast times 2^-112 over every finite fp16, in both word halves."""
    bits = np.arange(65536, dtype=np.uint32)
    halves = torch.from_numpy(bits.astype(np.uint16).view(np.float16).copy())
    finite = torch.isfinite(halves).numpy()
    want = (halves.double() * 2.0 ** -112).numpy()
    low = np.array([float(solution._low.py_func(int(np.uint32(b).view(np.int32)))) for b in bits])
    high = np.array([float(solution._high.py_func(int(np.uint32(b << 16).view(np.int32)))) for b in bits])
    # the high half with junk below it must not leak into the result (and the low half with junk above it)
    junk = np.array([float(solution._high.py_func(int(np.uint32((b << 16) | 0xBEEF).view(np.int32)))) for b in bits])
    low_junk = np.array([float(solution._low.py_func(int(np.uint32(b | 0xC0DE0000).view(np.int32)))) for b in bits])
    bad = 0
    for got in (low, high, junk, low_junk):
        bad += int(((got != want) & finite).sum())
    return bad


def make_inputs(problem):
    torch.manual_seed(0)
    hidden = torch.randn(TOKENS, HIDDEN).to(torch.float16)
    gate = (torch.randn(problem.NUM_EXPERTS, HIDDEN) / HIDDEN ** 0.5).to(torch.float16)
    hidden[3] = (hidden[3].float() * 1000.0).to(torch.float16)
    hidden[5] = (hidden[5].float() * 2.0 ** -16).to(torch.float16)  # fp16 subnormals
    gate[2, :8] = (gate[2, :8].float() * 2.0 ** -12).to(torch.float16)  # subnormal gate weights
    gate[6, 17] = 65504.0
    gate[4, 100] = -65504.0
    gate[1, 200:] = gate[1, 200:] * 4.0  # a larger row
    for _ in range(problem.MAX_REDRAWS):
        redraw = problem._near_ties(hidden, gate)
        count = int(redraw.sum())
        if count == 0:
            break
        hidden[redraw] = torch.randn(count, HIDDEN).to(torch.float16)
    assert int(problem._near_ties(hidden, gate).sum()) == 0
    return [hidden, gate]


def main() -> None:
    wanted = sys.argv[1:] or list(SOLUTIONS)
    problem = load(PROBLEM, "problem04")
    inputs = make_inputs(problem)
    anchor = problem.reference(*[t.double() for t in inputs])
    reference = problem.reference(*inputs)
    ref_err = float((reference.double() - anchor).abs().max())
    anchor_max = float(anchor.abs().max())
    limit = 3.0 * max(ref_err, 1.1920928955078125e-07 * anchor_max)
    print(f"reference (float32 math) error {ref_err:.3g}, max|anchor| {anchor_max:.3g}, allowance {limit:.3g}")
    before = [t.clone() for t in inputs]
    for tag in wanted:
        solution = load(SOLUTIONS[tag], tag)
        shrink(solution)
        if hasattr(solution, "_low"):
            print(f"{tag}: fp16 widening, mismatches over 4 x 65536 patterns (non-finite skipped): "
                  f"{check_widening(solution)}")
        out, seconds, untouched = solve_timed(solution, inputs, before)
        worst = worst_error(out, anchor)
        chosen = torch.equal(out != 0, anchor != 0)
        print(f"{tag}: {tuple(out.shape)} {out.dtype}, max abs error {worst:.3g} (allowance {limit:.3g}, "
              f"{worst / limit:.2f}x of it), passes {worst <= limit}, same experts {chosen}, inputs unchanged "
              f"{untouched}, {seconds:.0f} s in the simulator")


if __name__ == "__main__":
    main()
