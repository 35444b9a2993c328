"""numba-cuda solution for 29_fp8_block_scaled_gemm: a shared-memory tiled GEMM (64 x 64 output tiles, each thread
4 x 4 outputs in registers, float32 on the CUDA cores: numba has no tensor-core access). Each 128-wide block of the
inner dimension is summed on its own and added in with its activation-group and weight-block scales. The fp8 codes
are cast to float32 with torch (numba has no fp8 type)."""

import torch
from numba import cuda, float32

TILE = 64
INNER = 16
BLOCK = 128
PER_THREAD = 4  # 16 x 16 threads, 4 x 4 outputs each


@cuda.jit
def _block_scaled_gemm(a, a_scales, b, b_scales, out):
    tile_a = cuda.shared.array((TILE, INNER), float32)
    tile_b = cuda.shared.array((TILE, INNER), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    tid = ty * 16 + tx
    row0 = cuda.blockIdx.y * TILE
    col0 = cuda.blockIdx.x * TILE
    acc = cuda.local.array((PER_THREAD, PER_THREAD), float32)
    part = cuda.local.array((PER_THREAD, PER_THREAD), float32)
    for i in range(PER_THREAD):
        for j in range(PER_THREAD):
            acc[i, j] = float32(0.0)
    for kb in range(a.shape[1] // BLOCK):
        for i in range(PER_THREAD):
            for j in range(PER_THREAD):
                part[i, j] = float32(0.0)
        for k0 in range(kb * BLOCK, (kb + 1) * BLOCK, INNER):
            for load in range(tid, TILE * INNER, 256):
                r = load // INNER
                kk = load % INNER
                tile_a[r, kk] = a[row0 + r, k0 + kk]
                tile_b[r, kk] = b[col0 + r, k0 + kk]
            cuda.syncthreads()
            for kk in range(INNER):
                for i in range(PER_THREAD):
                    x = tile_a[ty + 16 * i, kk]
                    for j in range(PER_THREAD):
                        part[i, j] += x * tile_b[tx + 16 * j, kk]
            cuda.syncthreads()
        weight_scale = b_scales[col0 // BLOCK, kb]  # a 64-wide column tile lies inside one 128 block
        for i in range(PER_THREAD):
            activation_scale = a_scales[row0 + ty + 16 * i, kb]
            for j in range(PER_THREAD):
                acc[i, j] += part[i, j] * activation_scale * weight_scale
    for i in range(PER_THREAD):
        for j in range(PER_THREAD):
            out[row0 + ty + 16 * i, col0 + tx + 16 * j] = acc[i, j]


def solve(a, a_scales, b, b_scales):
    m, k = a.shape
    n = b.shape[0]
    assert m % TILE == 0 and n % TILE == 0 and k % BLOCK == 0
    out = torch.empty(m, n, device=a.device, dtype=torch.float32)
    _block_scaled_gemm[(n // TILE, m // TILE), (16, 16)](a.float(), a_scales.contiguous(), b.float(),
                                                         b_scales.contiguous(), out)
    return out.to(torch.bfloat16)
