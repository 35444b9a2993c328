"""CPU emulation of the candidates' arithmetic for problem 53 (no GPU, no triton needed).

Each candidate's math is replayed in plain PyTorch in the kernel's operation order: fp32 element-wise work, bf16 x bf16
tensor-core dots as fp32 matmuls of bf16-valued operands (v3's "bf16x3" split products likewise) (the products are exact in fp32), "ieee" dots as fp32
matmuls, "tf32" dots with both operands truncated to tf32 (what the MMA does with raw fp32 registers; worst case),
"tf32x3" as Triton's F32DotTC decomposition (big = round-to-nearest tf32, small = a - big truncated to tf32,
small*big + big*small + big*big), outputs rounded to bf16 (round to nearest even). The errors are measured against
the float64 anchor (the problem's reference on float64 inputs), beside the fp32 eager reference's own error, and
expressed as the grader's allowance ratio: err / (3 * max(ref_err, eps_bf16 * max|anchor|)); pass means <= 1.

Run: /usr/bin/python3 bench/candidates/53/check_math.py
"""

import importlib.util
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
spec = importlib.util.spec_from_file_location(
    "p53", os.path.join(ROOT, "problems/linear_attention/53_gated_delta_chunk_wy_transform.py"))
P = importlib.util.module_from_spec(spec)
spec.loader.exec_module(P)
sys.path.insert(0, os.path.join(ROOT, "core/grader"))
from mkbgrader.outliers import inject_outliers  # noqa: E402

C = 64
EPS_BF16 = 0.0078125


# ---------------------------------------------------------------- rounding models
def tf32_trunc(x):
    return (x.contiguous().view(torch.int32) & ~0x1FFF).view(torch.float32)


def tf32_rna(x):
    return ((x.contiguous().view(torch.int32) + 0x1000) & ~0x1FFF).view(torch.float32)


def bf16(x):
    return x.to(torch.bfloat16).to(torch.float32)


def dot(a, b, prec):
    if prec == "ieee":
        return a @ b
    if prec == "tf32":
        return tf32_trunc(a) @ tf32_trunc(b)
    if prec == "tf32x3":
        ab, bb = tf32_rna(a), tf32_rna(b)
        a_s, b_s = tf32_trunc(a - ab), tf32_trunc(b - bb)
        return a_s @ bb + ab @ b_s + ab @ bb
    if prec == "bf16x3":  # v3's _dot3: lo*hi + hi*lo + hi*hi on bf16 splits
        ah, bh = bf16(a), bf16(b)
        al, bl = bf16(a - ah), bf16(b - bh)
        return al @ bh + ah @ bl + ah @ bh
    raise ValueError(prec)


def split_apply(t, scale, x):
    """(t diag(scale)) x with the scaled t split into bf16 hi + lo; x holds bf16 values."""
    y = t * scale.unsqueeze(-2)
    hi = bf16(y)
    lo = bf16(y - hi)
    return hi @ x + lo @ x


# ---------------------------------------------------------------- inputs as the kernels see them
def chunked(k, v, beta, g):
    """[n, 64, D] fp32 tiles of bf16 values, beta [n, 64] fp32, g [n, 64] fp32 raw log decays."""
    return (P._chunks(k.float(), C).reshape(-1, C, k.shape[-1]), P._chunks(v.float(), C).reshape(-1, C, v.shape[-1]),
            P._chunks(beta.float(), C).reshape(-1, C), P._chunks(g.float(), C).reshape(-1, C))


def unchunk(x, like):
    batch, seq_len, heads, dim = like.shape
    return P._unchunk(x.reshape(batch, heads, seq_len // C, C, dim))


# ---------------------------------------------------------------- candidates
def shipped(kc, vc, bc, graw):  # the current solution: ieee product of powers
    g = torch.cumsum(graw, -1)
    i = torch.arange(C)
    lower = i[:, None] > i[None, :]
    kk = kc @ kc.transpose(-1, -2)
    a = torch.where(lower, bc.unsqueeze(-1) * kk * torch.exp(g.unsqueeze(-1) - g.unsqueeze(-2)), torch.zeros(()))
    eye = torch.eye(C)
    t = eye - a
    power = a @ a
    for _ in range(5):
        t = t @ (eye + power)
        power = power @ power
    return t @ (bc.unsqueeze(-1) * kc * torch.exp(g).unsqueeze(-1)), t @ (bc.unsqueeze(-1) * vc)


def v1(kc, vc, bc, graw, prec="tf32x3"):
    g = torch.cumsum(graw, -1)
    i = torch.arange(C)
    lower = i[:, None] > i[None, :]
    kk = kc @ kc.transpose(-1, -2)  # bf16 dot, fp32 accumulate
    decay = torch.exp(torch.where(lower, g.unsqueeze(-1) - g.unsqueeze(-2), torch.zeros(())))
    a = torch.where(lower, bc.unsqueeze(-1) * kk * decay, torch.zeros(()))
    eye = torch.eye(C)
    t = eye - a
    p = dot(a, a, prec)
    t = dot(t, p, prec) + t
    for _ in range(4):
        p = dot(p, p, prec)
        t = dot(t, p, prec) + t
    w = split_apply(t, bc * torch.exp(g), kc)
    u = split_apply(t, bc, vc)
    return w, u


def v2(kc, vc, bc, graw, prec="ieee"):
    B = 16
    ks = [kc[:, B * p:B * (p + 1)] for p in range(4)]
    vs = [vc[:, B * p:B * (p + 1)] for p in range(4)]
    bs = [bc[:, B * p:B * (p + 1)] for p in range(4)]
    gs = []
    for p in range(4):
        gp = torch.cumsum(graw[:, B * p:B * (p + 1)], -1)
        if p:
            gp = gp + gs[-1][:, -1:]
        gs.append(gp)
    r = torch.arange(B)
    lower = r[:, None] > r[None, :]

    def a_block(i, j):
        kk = ks[i] @ ks[j].transpose(-1, -2)
        if i == j:
            decay = torch.exp(torch.where(lower, gs[i].unsqueeze(-1) - gs[j].unsqueeze(-2), torch.zeros(())))
            return torch.where(lower, bs[i].unsqueeze(-1) * kk * decay, torch.zeros(()))
        return bs[i].unsqueeze(-1) * kk * torch.exp(gs[i].unsqueeze(-1) - gs[j].unsqueeze(-2))

    def inv16(a):
        t = torch.eye(B) - a
        p = dot(a, a, prec)
        t = dot(t, p, prec) + t
        p = dot(p, p, prec)
        t = dot(t, p, prec) + t
        p = dot(p, p, prec)
        t = dot(t, p, prec) + t
        return t

    A = {(i, j): a_block(i, j) for i in range(4) for j in range(i + 1)}
    T = {(p, p): inv16(A[p, p]) for p in range(4)}
    T[1, 0] = -dot(T[1, 1], dot(A[1, 0], T[0, 0], prec), prec)
    T[2, 1] = -dot(T[2, 2], dot(A[2, 1], T[1, 1], prec), prec)
    T[3, 2] = -dot(T[3, 3], dot(A[3, 2], T[2, 2], prec), prec)
    s20 = dot(A[2, 1], T[1, 0], prec) + dot(A[2, 0], T[0, 0], prec)
    T[2, 0] = -dot(T[2, 2], s20, prec)
    s31 = dot(A[3, 2], T[2, 1], prec) + dot(A[3, 1], T[1, 1], prec)
    T[3, 1] = -dot(T[3, 3], s31, prec)
    s30 = dot(A[3, 0], T[0, 0], prec)
    s30 = dot(A[3, 1], T[1, 0], prec) + s30
    s30 = dot(A[3, 2], T[2, 0], prec) + s30
    T[3, 0] = -dot(T[3, 3], s30, prec)
    es = [bs[q] * torch.exp(gs[q]) for q in range(4)]
    ws, us = [], []
    for p in range(4):
        w = torch.zeros(kc.shape[0], B, kc.shape[-1])
        u = torch.zeros(vc.shape[0], B, vc.shape[-1])
        for q in range(p + 1):
            w = w + split_apply(T[p, q], es[q], ks[q])
            u = u + split_apply(T[p, q], bs[q], vs[q])
        ws.append(w)
        us.append(u)
    return torch.cat(ws, 1), torch.cat(us, 1)


CANDIDATES = [
    ("shipped (ieee powers, fp32 u/w)", shipped),
    ("v1 tf32x3 powers + split-bf16 u/w", lambda *x: v1(*x, prec="tf32x3")),
    ("v1 with PRECISION='tf32' (knob)", lambda *x: v1(*x, prec="tf32")),
    ("v3 bf16x3 powers + split-bf16 u/w", lambda *x: v1(*x, prec="bf16x3")),
    ("v2 ieee 16x16 blocks + split-bf16", lambda *x: v2(*x, prec="ieee")),
    ("v2 with PRECISION='tf32x3' (knob)", lambda *x: v2(*x, prec="tf32x3")),
    ("v2 with PRECISION='tf32' (knob)", lambda *x: v2(*x, prec="tf32")),
]


def report(name, cand32, anchor, ref):
    out = []
    for label, c32, an, rf in zip(("w", "u"), cand32, anchor, ref):
        cb = c32.to(torch.bfloat16).double()
        amax = an.abs().max().item()
        err = (cb - an).abs().max().item()
        err32 = (c32.double() - an).abs().max().item()
        ref_err = (rf.double() - an).abs().max().item()
        allow = 3 * max(ref_err, EPS_BF16 * amax)
        big = an.abs() > 0.01 * amax
        rel_el = ((cb - an).abs()[big] / an.abs()[big]).max().item()
        norm = ((cb - an).norm() / an.norm()).item()
        out.append(f"{label}: err/max|anchor| {err / amax:.2e} (before bf16 rounding {err32 / amax:.2e}), "
                   f"normwise {norm:.2e}, max elementwise rel (|anchor|>1% max) {rel_el:.2e}, "
                   f"allowance ratio {err / allow:.3f} (fp32 eager ref {ref_err / allow:.3f})")
    print(f"  {name:36s} " + "\n  " .join([out[0], " " * 36 + out[1]]))


def main():
    torch.manual_seed(0)
    P.BATCH, P.SEQ_LEN = 1, 1024  # 32 heads x 16 chunks = 512 chunk-heads per draw (heads and dims as the problem)
    for draw in range(4):
        k, v, beta, g = P.make_inputs(device="cpu")
        tag = f"draw {draw}"
        if draw == 3:
            inputs = [k, v, beta, g]
            n = inject_outliers(inputs, [2], 0.001, 50.0, seed=1234)
            tag = f"outlier draw (beta, {n} values ~N(0,1)*50)"
        anchor = P.reference(k.double(), v.double(), beta.double(), g.double())
        ref = P.reference(k, v, beta, g)  # fp32 eager, bf16 out
        print(f"{tag}: max|w| {anchor[0].abs().max().item():.3g}, max|u| {anchor[1].abs().max().item():.3g}")
        kc, vc, bc, gc = chunked(k, v, beta, g)
        for name, fn in CANDIDATES:
            w32, u32 = fn(kc, vc, bc, gc)
            report(name, (unchunk(w32, k), unchunk(u32, v)), anchor, ref)


if __name__ == "__main__":
    main()
