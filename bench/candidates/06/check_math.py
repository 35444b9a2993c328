"""CPU checks for the 06_chunked_retention Pallas candidates (run with /usr/bin/python3; torch on the CPU, no JAX).

1. The chunked algebra (per 64-token chunk: decayed intra-chunk scores, queries x carried state, state update), as
   the reference runs it in float64 (the grader's anchor), against the definition's quadratic form over the whole
   sequence in float64; the kernels use the same per-chunk algebra, checked under 2.
2. Each candidate's own code (solve, jit body, block specs, kernel) through ../pallas_standin.py, a torch stand-in for the JAX
   and Pallas calls, with fp16 operands and float32 accumulation as written in the kernel; its error against the
   anchor beside the grader's allowance, 3 x max(reference error, eps(fp16) x max|anchor|). The shipped Pallas solution
   goes through the same stand-in as a control. One ordinary draw and one outlier draw (the grader's rule: 0.1% of q,
   k and v replaced by N(0, 1) x 50; informational, as in the grader: the fp16 output itself overflows there).
This proves the math and the candidates' indexing, not the Pallas lowering or any timing."""

import importlib.util
import math
import os
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.dirname(HERE))  # bench/candidates, for pallas_standin.py
import pallas_standin as standin  # noqa: E402

EPS_FP16 = 0.0009765625


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def quadratic(q, k, v, decay):
    """The definition, o_t = sum_{s <= t} gamma_h^(t - s) (q_t . k_s / sqrt(dim)) v_s, over the whole sequence at once
    in float64, one head at a time: what the chunked form (the reference's and the kernels') must equal."""
    batch, heads, seq_len, dim = q.shape
    index = torch.arange(seq_len, dtype=torch.float64)
    distance = index.view(-1, 1) - index.view(1, -1)
    out = torch.empty(q.shape, dtype=torch.float64)
    for h in range(heads):
        mask = torch.where(distance >= 0, torch.exp(torch.log(decay[h].double()) * distance.clamp(min=0)),
                           torch.zeros((), dtype=torch.float64))
        scores = (q[0, h].double() @ k[0, h].double().T) * dim**-0.5 * mask
        out[0, h] = scores @ v[0, h].double()
    return out


def inject_outliers(inputs, positions, seed, p=0.001, scale=50.0):
    """The grader's outlier draw (core/grader/mkbgrader/child/outliers.py), on the CPU."""
    for position in positions:
        tensor = inputs[position]
        generator = torch.Generator().manual_seed(seed + position)
        mask = torch.rand(tensor.numel(), generator=generator) < p
        index = mask.nonzero().reshape(-1)
        noise = torch.randn(index.numel(), generator=generator, dtype=torch.float32) * scale
        tensor.view(-1).index_copy_(0, index, noise.to(tensor.dtype))


def verdict(name, out, ref, anchor, seconds, informational=False):
    """The grader's rule (core/grader/mkbgrader/parent/contract.py). On an outlier draw (informational: the grader
    records it but does not fail on it) the fp16 output can overflow where |anchor| > 65504, so the errors are taken
    where the reference is finite, and the candidate must be non-finite exactly where the reference is."""
    finite = torch.isfinite(ref) if informational else torch.ones_like(anchor, dtype=torch.bool)
    same_nonfinite = bool((torch.isfinite(out) == torch.isfinite(ref)).all())
    cand_err = (out.double() - anchor)[finite].abs().max().item()
    ref_err = (ref.double() - anchor)[finite].abs().max().item()
    allowance = 3.0 * max(ref_err, EPS_FP16 * anchor[finite].abs().max().item())
    ok = (math.isfinite(cand_err) and cand_err <= allowance and out.dtype == ref.dtype and out.shape == ref.shape
          and same_nonfinite)
    note = f", {int((~finite).sum())} overflowed elements skipped" if informational else ""
    print(f"  {name:18s} err {cand_err:.3e}  ref_err {ref_err:.3e}  allowance {allowance:.3e}  "
          f"{cand_err / allowance:.2f} of it  {'PASS' if ok else 'FAIL'}  ({seconds:.1f} s{note})")
    return ok


def main():
    problem = load(os.path.join(REPO, "problems/linear_attention/06_chunked_retention.py"), "problem06")
    standin.install()
    solutions = [("shipped (control)", os.path.join(REPO, "problems/linear_attention/_solutions/"
                                                          "06_chunked_retention.pallas.py"))]
    solutions += [(f"v{n}", os.path.join(HERE, f"v{n}.pallas.py")) for n in (1, 2)]
    modules = [(name, load(path, f"candidate_{n}")) for n, (name, path) in enumerate(solutions)]
    all_ok = True
    for draw, outliers in ((0, False), (1, True)):
        torch.manual_seed(draw)
        inputs = problem.make_inputs(device="cpu")
        if outliers:
            inject_outliers(inputs, problem.MKB_META["outliers"]["inputs"], seed=1234)
        print(f"draw {draw} ({'outliers' if outliers else 'plain'}), shapes {[tuple(t.shape) for t in inputs]}")
        anchor = problem.reference(*[t.double() for t in inputs])
        ref = problem.reference(*inputs)
        math_err = ((quadratic(*inputs) - anchor).abs().max() / anchor.abs().max()).item()
        print(f"  definition (quadratic form, float64) vs chunked anchor: max abs / max|anchor| {math_err:.3e} "
              f"(max|anchor| {anchor.abs().max().item():.3e})")
        all_ok &= math_err < 1e-12
        outputs = {}
        for name, module in modules:
            start = time.time()
            out = module.solve(*[t.clone() for t in inputs])
            outputs[name] = out
            all_ok &= verdict(name, out, ref, anchor, time.time() - start, informational=outliers)
        same = torch.equal(outputs["v1"], outputs["v2"])
        print(f"  v2 output bit-identical to v1: {same}")
        all_ok &= same
    print("ALL PASS" if all_ok else "SOME FAILED")
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
