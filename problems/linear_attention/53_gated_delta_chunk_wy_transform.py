"""Gated delta rule chunk preparation: the WY (UT) transform of each 64-token chunk (Qwen3-Next, FLA's chunked form)."""

import torch

# The first stage of the chunked gated delta rule (flash-linear-attention's chunk_gated_delta_rule, used by
# Qwen3-Next's 32 linear-attention value heads of dims 128): within each 64-token chunk, with g the chunk-local
# cumulative log decay, A[i, j] = beta_i (k_i . k_j) exp(g_i - g_j) for j < i (0 on and above the diagonal), T = (I + A)^-1
# (unit lower triangular), and the chunk's WY factors u = T (beta * v) and w = T (beta * exp(g) * k). Keys are
# L2-normalised, beta in (0, 1), per-token log decays in (-1, 0). 4 sequences of 4096 tokens (8192 chunks), bf16 out.
# Eager estimate on an H200: ~2 ms (batched 64 x 64 GEMMs, a batched triangular solve, the decay matrix).
# numba stays below eager here (0.57x [0.57, 0.57] on an H100, 2026-12-06): the chunk's Gram matrix and the T-times-rows
# products are dense 64 x 128 matmuls, which eager runs on tensor cores through cuBLAS and numba can only run as
# float32 FMAs on the SIMT cores (it has no MMA instructions); its solution stages the keys in shared memory and
# register-tiles those products, which halves the time of a thread-per-entry kernel (0.26x) but cannot close the gap.
BATCH = 4
SEQ_LEN = 4096
HEADS = 32
HEAD_DIM = 128
CHUNK = 64

MKB_META = {
    "category": "LinearAlgebra",
    "tags": ["linear_attention", "triangular_solve", "gemm", "scan"],
    "outliers": {"inputs": [2]},
}


def make_inputs(device="cuda"):
    k = torch.nn.functional.normalize(torch.randn(BATCH, SEQ_LEN, HEADS, HEAD_DIM, device=device), dim=-1)
    v = torch.randn(BATCH, SEQ_LEN, HEADS, HEAD_DIM, device=device)
    beta = torch.sigmoid(torch.randn(BATCH, SEQ_LEN, HEADS, device=device))
    g = -torch.exp(-4.0 * torch.rand(BATCH, SEQ_LEN, HEADS, device=device, dtype=torch.float32))
    return [k.to(torch.bfloat16), v.to(torch.bfloat16), beta.to(torch.bfloat16), g]


def _wide(t):
    return t if t.dtype == torch.float64 else t.float()


def _chunks(x, chunk):  # [B, T, H, ...] -> [B, H, N, chunk, ...]
    batch, seq_len, heads = x.shape[:3]
    x = x.reshape(batch, seq_len // chunk, chunk, heads, *x.shape[3:])
    return x.permute(0, 3, 1, 2, *range(4, x.dim()))


def _unchunk(x):  # [B, H, N, chunk, D] -> [B, T, H, D]
    batch, heads, n, chunk, dim = x.shape
    return x.permute(0, 2, 3, 1, 4).reshape(batch, n * chunk, heads, dim)


def reference(k, v, beta, g):
    kc, vc = _chunks(_wide(k), CHUNK), _chunks(_wide(v), CHUNK)
    bc = _chunks(_wide(beta), CHUNK)  # [B, H, N, C]
    gc = torch.cumsum(_chunks(_wide(g), CHUNK), dim=-1)
    decay = torch.exp(gc.unsqueeze(-1) - gc.unsqueeze(-2))
    a = torch.tril(bc.unsqueeze(-1) * torch.matmul(kc, kc.transpose(-1, -2)) * decay, diagonal=-1)
    eye = torch.eye(CHUNK, device=k.device, dtype=a.dtype).expand_as(a)
    t = torch.linalg.solve_triangular(eye + a, eye, upper=False, unitriangular=True)
    u = torch.matmul(t, bc.unsqueeze(-1) * vc)
    w = torch.matmul(t, (bc * torch.exp(gc)).unsqueeze(-1) * kc)
    return _unchunk(w).to(k.dtype), _unchunk(u).to(v.dtype)
