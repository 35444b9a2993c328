"""CPU checks for the 35_mamba2_ssd_chunk_scan Pallas candidates (run with /usr/bin/python3; torch on the CPU, no JAX).

1. The definition, the Mamba-2 recurrence h_t = exp(dt_t a) h_{t-1} + dt_t x_t B_t^T, y_t = h_t C_t + D x_t run token
   by token in float64, against the problem's reference (256-token chunks) run in float64 (the grader's anchor); and
   the kernels' chunked algebra with 64-token chunks (cumulative log decays, segment-masked C B^T, C against the
   carried state, the state update) in float64 against the same anchor.
2. Each candidate's own code (solve, jit body, block specs, kernel) through ../pallas_standin.py, a torch stand-in for the JAX
   and Pallas calls, with fp16 operands and float32 accumulation as written in the kernel; its error against the
   anchor beside the grader's allowance, 3 x max(reference error, eps(bf16) x max|anchor|). The shipped Pallas solution
   goes through the same stand-in as a control. One ordinary draw and one outlier draw (the grader's rule: 0.1% of x,
   B and C replaced by N(0, 1) x 50; informational, as in the grader).
This proves the math and the candidates' indexing, not the Pallas lowering or any timing."""

import importlib.util
import math
import os
import sys
import time

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.dirname(HERE))  # bench/candidates, for pallas_standin.py
import pallas_standin as standin  # noqa: E402

EPS_BF16 = 0.0078125


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def recurrence(x, dt_raw, a, b, c, d, dt_bias):
    """The definition, token by token, in float64 (all sequences and heads at once)."""
    x, b, c = x.double(), b.double(), c.double()
    dt = F.softplus(dt_raw.double() + dt_bias.double())  # [B, L, H]
    batch, seq_len, heads, head_dim = x.shape
    state = torch.zeros(batch, heads, head_dim, b.shape[-1], dtype=torch.float64)
    y = torch.empty_like(x)
    for t in range(seq_len):
        decay = torch.exp(dt[:, t] * a.double()).view(batch, heads, 1, 1)
        state = state * decay + (dt[:, t, :, None] * x[:, t])[..., None] * b[:, t, None, None, :]
        y[:, t] = (state * c[:, t, None, None, :]).sum(-1) + d.double().view(1, heads, 1) * x[:, t]
    return y


def chunked64(x, dt_raw, a, b, c, d, dt_bias, chunk=64):
    """The kernels' algebra in float64, 64-token chunks."""
    x, b, c = x.double(), b.double(), c.double()
    dt = F.softplus(dt_raw.double() + dt_bias.double())
    batch, seq_len, heads, head_dim = x.shape
    causal = torch.tril(torch.ones(chunk, chunk, dtype=torch.bool))
    state = torch.zeros(batch, heads, head_dim, b.shape[-1], dtype=torch.float64)
    y = torch.empty_like(x)
    for start in range(0, seq_len, chunk):
        rows = slice(start, start + chunk)
        xc = x[:, rows].transpose(1, 2)  # [B, H, Q, P]
        dtc = dt[:, rows].transpose(1, 2)  # [B, H, Q]
        cum = torch.cumsum(dtc * a.double().view(1, -1, 1), dim=-1)
        total = cum[..., -1:]
        decay = torch.where(causal, torch.exp(torch.where(causal, cum[..., :, None] - cum[..., None, :], 0.0)), 0.0)
        scores = (c[:, rows] @ b[:, rows].transpose(-1, -2))[:, None] * decay * dtc[..., None, :]
        out = scores @ xc + torch.einsum("bqn,bhpn->bhqp", c[:, rows], state) * torch.exp(cum)[..., None]
        y[:, rows] = (out + xc * d.double().view(1, -1, 1, 1)).transpose(1, 2)
        weights = dtc * torch.exp(total - cum)
        state = state * torch.exp(total)[..., None] + (xc * weights[..., None]).transpose(-1, -2) @ b[:, rows][:, None]
    return y


def inject_outliers(inputs, positions, seed, p=0.001, scale=50.0):
    """The grader's outlier draw (core/grader/mkbgrader/child/outliers.py), on the CPU."""
    for position in positions:
        tensor = inputs[position]
        generator = torch.Generator().manual_seed(seed + position)
        mask = torch.rand(tensor.numel(), generator=generator) < p
        index = mask.nonzero().reshape(-1)
        noise = torch.randn(index.numel(), generator=generator, dtype=torch.float32) * scale
        tensor.view(-1).index_copy_(0, index, noise.to(tensor.dtype))


def verdict(name, out, ref, anchor, seconds):
    """The grader's rule (core/grader/mkbgrader/parent/contract.py)."""
    cand_err = (out.double() - anchor).abs().max().item()
    ref_err = (ref.double() - anchor).abs().max().item()
    allowance = 3.0 * max(ref_err, EPS_BF16 * anchor.abs().max().item())
    ok = math.isfinite(cand_err) and cand_err <= allowance and out.dtype == ref.dtype and out.shape == ref.shape
    print(f"  {name:18s} err {cand_err:.3e}  ref_err {ref_err:.3e}  allowance {allowance:.3e}  "
          f"{cand_err / allowance:.2f} of it  {'PASS' if ok else 'FAIL'}  ({seconds:.1f} s)")
    return ok


def main():
    problem = load(os.path.join(REPO, "problems/linear_attention/35_mamba2_ssd_chunk_scan.py"), "problem35")
    standin.install()
    solutions = [("shipped (control)", os.path.join(REPO, "problems/linear_attention/_solutions/"
                                                          "35_mamba2_ssd_chunk_scan.pallas.py"))]
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
        scale = anchor.abs().max()
        for name, fn in (("recurrence", recurrence), ("chunked64 algebra", chunked64)):
            err = ((fn(*inputs) - anchor).abs().max() / scale).item()
            print(f"  {name} (float64) vs anchor: max abs / max|anchor| {err:.3e} (max|anchor| {scale.item():.3e})")
            all_ok &= err < 1e-12
        outputs = {}
        for name, module in modules:
            if outliers and name.startswith("shipped"):
                continue  # the control's token loop is slow here; one draw of it is enough
            start = time.time()
            out = module.solve(*[t.clone() for t in inputs])
            outputs[name] = out
            all_ok &= verdict(name, out, ref, anchor, time.time() - start)
        same = torch.equal(outputs["v1"], outputs["v2"])
        print(f"  v2 output bit-identical to v1: {same}")
        all_ok &= same
    print("ALL PASS" if all_ok else "SOME FAILED")
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
