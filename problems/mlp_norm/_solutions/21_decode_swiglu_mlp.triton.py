"""Triton solution for 21_decode_swiglu_mlp: gate/up GEMM with the SiLU-and-mul epilogue, then a split-K down GEMM.

With 32 tokens the step is bound by reading the weights, so each kernel streams weight tiles through tl.dot with
all 32 tokens as the M dimension; the down projection splits K eight ways (deterministic fixed-order reduction) to
put enough programs on the GPU.
"""

import torch
import triton
import triton.language as tl

BLOCK_N = 64
BLOCK_K = 64
SPLITS = 8
REDUCE_BLOCK = 1024


@triton.jit
def _gate_up_act_kernel(x_ptr, w_ptr, h_ptr, HIDDEN: tl.constexpr, INTERMEDIATE: tl.constexpr, M: tl.constexpr,
                        BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    columns = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    rows = tl.arange(0, M)
    ks = tl.arange(0, BLOCK_K)
    gate_rows = columns.to(tl.int64) * HIDDEN
    up_rows = (columns + INTERMEDIATE).to(tl.int64) * HIDDEN
    acc_gate = tl.zeros((M, BLOCK_N), dtype=tl.float32)
    acc_up = tl.zeros((M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, HIDDEN, BLOCK_K):
        x = tl.load(x_ptr + rows[:, None] * HIDDEN + (k0 + ks)[None, :])  # [M, BLOCK_K]
        w_gate = tl.load(w_ptr + gate_rows[None, :] + (k0 + ks)[:, None])  # [BLOCK_K, BLOCK_N]
        w_up = tl.load(w_ptr + up_rows[None, :] + (k0 + ks)[:, None])
        acc_gate = tl.dot(x, w_gate, acc_gate)
        acc_up = tl.dot(x, w_up, acc_up)
    hidden = acc_gate * tl.sigmoid(acc_gate) * acc_up
    tl.store(h_ptr + rows[:, None] * INTERMEDIATE + columns[None, :], hidden.to(h_ptr.dtype.element_ty))


@triton.jit
def _down_partial_kernel(h_ptr, w_ptr, partial_ptr, HIDDEN: tl.constexpr, INTERMEDIATE: tl.constexpr,
                         M: tl.constexpr, K_PER_SPLIT: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    columns = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    split = tl.program_id(1)
    rows = tl.arange(0, M)
    ks = tl.arange(0, BLOCK_K)
    weight_rows = columns.to(tl.int64) * INTERMEDIATE
    acc = tl.zeros((M, BLOCK_N), dtype=tl.float32)
    k_begin = split * K_PER_SPLIT
    for step in range(0, K_PER_SPLIT, BLOCK_K):
        k0 = k_begin + step
        h = tl.load(h_ptr + rows[:, None] * INTERMEDIATE + (k0 + ks)[None, :])  # [M, BLOCK_K]
        w = tl.load(w_ptr + weight_rows[None, :] + (k0 + ks)[:, None])  # [BLOCK_K, BLOCK_N]
        acc = tl.dot(h, w, acc)
    tl.store(partial_ptr + split * (M * HIDDEN) + rows[:, None] * HIDDEN + columns[None, :], acc)


@triton.jit
def _reduce_splits_kernel(partial_ptr, out_ptr, n_elements, SPLITS: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    total = tl.zeros((BLOCK,), dtype=tl.float32)
    for split in tl.static_range(SPLITS):
        total += tl.load(partial_ptr + split * n_elements + offsets, mask=mask, other=0.0)
    tl.store(out_ptr + offsets, total.to(out_ptr.dtype.element_ty), mask=mask)


def solve(x, gate_up_weight, down_weight):
    x, gate_up_weight, down_weight = x.contiguous(), gate_up_weight.contiguous(), down_weight.contiguous()
    tokens, hidden_size = x.shape
    intermediate = down_weight.shape[1]
    hidden = torch.empty(tokens, intermediate, device=x.device, dtype=x.dtype)
    _gate_up_act_kernel[(intermediate // BLOCK_N,)](x, gate_up_weight, hidden, HIDDEN=hidden_size,
                                                    INTERMEDIATE=intermediate, M=tokens, BLOCK_N=BLOCK_N,
                                                    BLOCK_K=BLOCK_K, num_warps=4, num_stages=4)
    partial = torch.empty(SPLITS, tokens, hidden_size, device=x.device, dtype=torch.float32)
    _down_partial_kernel[(hidden_size // BLOCK_N, SPLITS)](hidden, down_weight, partial, HIDDEN=hidden_size,
                                                           INTERMEDIATE=intermediate, M=tokens,
                                                           K_PER_SPLIT=intermediate // SPLITS, BLOCK_N=BLOCK_N,
                                                           BLOCK_K=BLOCK_K, num_warps=4, num_stages=4)
    out = torch.empty(tokens, hidden_size, device=x.device, dtype=x.dtype)
    n_elements = out.numel()
    _reduce_splits_kernel[(triton.cdiv(n_elements, REDUCE_BLOCK),)](partial, out, n_elements, SPLITS=SPLITS,
                                                                    BLOCK=REDUCE_BLOCK, num_warps=4)
    return out
