"""numba-cuda solution for 06_chunked_retention: the recurrent form of retention. One block per (head, output column
j) keeps column j of the head's [dim, dim] state, one row per thread (S_t = gamma S_{t-1} + k_t v_t^T), and
reduces q_t . S_t[:, j] over the threads (warp shuffles, then shared memory) for every token t."""

import torch
from numba import cuda, float32

DIM = 128
WARPS = DIM // 32


@cuda.jit
def _retention(q, k, v, decay, out, scale):
    head = cuda.blockIdx.x
    col = cuda.blockIdx.y
    i = cuda.threadIdx.x
    lane = i % 32
    warp = i // 32
    partial = cuda.shared.array((2, WARPS), float32)
    gamma = decay[head]
    state = float32(0.0)
    for t in range(q.shape[2]):
        state = gamma * state + float32(k[0, head, t, i]) * float32(v[0, head, t, col])
        value = float32(q[0, head, t, i]) * state
        offset = 16
        while offset > 0:
            value += cuda.shfl_down_sync(0xFFFFFFFF, value, offset)
            offset //= 2
        slot = t % 2  # two alternating slots: one barrier per token suffices
        if lane == 0:
            partial[slot, warp] = value
        cuda.syncthreads()
        if i == 0:
            total = float32(0.0)
            for w in range(WARPS):
                total += partial[slot, w]
            out[0, head, t, col] = total * scale


def solve(q, k, v, decay):
    batch, heads, seq_len, dim = q.shape
    assert batch == 1 and dim == DIM
    out = torch.empty(q.shape, device=q.device, dtype=torch.float32)
    _retention[(heads, dim), DIM](q.contiguous(), k.contiguous(), v.contiguous(), decay.contiguous(), out,
                                  dim**-0.5)
    return out.to(q.dtype)
