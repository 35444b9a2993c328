"""numba-cuda solution for 26_olmoe_fused_expert_swiglu: the gate/up projection is a shared-memory tiled grouped
GEMM (64 x 64 output tiles, each thread 4 x 4 outputs in registers, float32 on the CUDA cores: numba has no
tensor-core access); a block's row-tile index is mapped to (expert, tile within the expert's segment) by walking the
expert offsets. The projection is rounded to bf16 as the reference's is (a torch cast), then an elementwise kernel
writes silu(gate) * up. numba reads no bfloat16, so inputs are cast with torch."""

import math

import torch
from numba import cuda, float32

TILE = 64
INNER = 16
PER_THREAD = 4  # 16 x 16 threads, 4 x 4 outputs each


@cuda.jit
def _grouped_gemm(activations, weights, expert_offsets, out):
    tile_a = cuda.shared.array((TILE, INNER), float32)
    tile_w = cuda.shared.array((TILE, INNER), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    tid = ty * 16 + tx
    # which expert, and which of its row tiles, this block owns
    tile = cuda.blockIdx.y
    expert = -1
    start = 0
    end = 0
    for e in range(weights.shape[0]):
        count = expert_offsets[e + 1] - expert_offsets[e]
        tiles = (count + TILE - 1) // TILE
        if expert < 0 and tile < tiles:
            expert = e
            start = expert_offsets[e] + tile * TILE
            end = expert_offsets[e + 1]
        if expert < 0:
            tile -= tiles
    if expert < 0:
        return
    col0 = cuda.blockIdx.x * TILE
    acc = cuda.local.array((PER_THREAD, PER_THREAD), float32)
    for i in range(PER_THREAD):
        for j in range(PER_THREAD):
            acc[i, j] = float32(0.0)
    inner = activations.shape[1]
    for k0 in range(0, inner, INNER):
        for load in range(tid, TILE * INNER, 256):  # 1024 values of each tile, 4 per thread
            r = load // INNER
            kk = load % INNER
            row = start + r
            tile_a[r, kk] = activations[row, k0 + kk] if row < end else float32(0.0)
            tile_w[r, kk] = weights[expert, col0 + r, k0 + kk]
        cuda.syncthreads()
        for kk in range(INNER):
            for i in range(PER_THREAD):
                a = tile_a[ty + 16 * i, kk]
                for j in range(PER_THREAD):
                    acc[i, j] += a * tile_w[tx + 16 * j, kk]
        cuda.syncthreads()
    for i in range(PER_THREAD):
        row = start + ty + 16 * i
        if row < end:
            for j in range(PER_THREAD):
                out[row, col0 + tx + 16 * j] = acc[i, j]


@cuda.jit
def _silu_mul(gate_up, out):
    half = out.shape[1]
    for index in range(cuda.grid(1), out.shape[0] * half, cuda.gridsize(1)):
        row = index // half
        col = index % half
        gate = gate_up[row, col]
        out[row, col] = gate / (float32(1.0) + math.exp(-gate)) * gate_up[row, half + col]


def solve(hidden, w13, expert_offsets):
    rows, inner = hidden.shape
    experts, width, _ = w13.shape
    assert width % TILE == 0 and inner % INNER == 0
    gate_up = torch.empty(rows, width, device=hidden.device, dtype=torch.float32)
    row_tiles = (rows + TILE - 1) // TILE + experts  # enough for every expert's partial last tile
    _grouped_gemm[(width // TILE, row_tiles), (16, 16)](hidden.float(), w13.float(), expert_offsets.contiguous(),
                                                        gate_up)
    out = torch.empty(rows, width // 2, device=hidden.device, dtype=torch.float32)
    _silu_mul[132 * 16, 256](gate_up.to(hidden.dtype).float(), out)
    return out.to(hidden.dtype)
