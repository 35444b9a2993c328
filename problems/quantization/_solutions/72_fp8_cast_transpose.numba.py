"""numba-cuda solution for 72_fp8_cast_transpose: one grid-stride pass scales and saturates every element in float32
and reduces |x| per block through shared memory into the tensor's amax (a float32 atomic max); torch rounds the
scaled values to fp8 e4m3 (a cast: numba has no fp8 type) and lays out the transpose. bfloat16 inputs are cast with
torch (numba reads no bfloat16)."""

import torch
from numba import cuda, float32

THREADS = 256
FP8_MAX = 448.0


@cuda.jit
def _scale_amax(x, scale, scaled, amax):
    tid = cuda.threadIdx.x
    factor = scale[0]
    local = float32(0.0)
    for i in range(cuda.grid(1), x.shape[0], cuda.gridsize(1)):
        value = x[i]
        local = max(local, abs(value))
        scaled[i] = min(max(value * factor, float32(-FP8_MAX)), float32(FP8_MAX))
    partial = cuda.shared.array(THREADS, float32)
    partial[tid] = local
    cuda.syncthreads()
    stride = THREADS // 2
    while stride > 0:
        if tid < stride:
            partial[tid] = max(partial[tid], partial[tid + stride])
        cuda.syncthreads()
        stride //= 2
    if tid == 0:
        cuda.atomic.max(amax, 0, partial[0])


def solve(x, scale):
    scaled = torch.empty(x.numel(), device=x.device, dtype=torch.float32)
    amax = torch.zeros(1, device=x.device, dtype=torch.float32)
    _scale_amax[132 * 16, THREADS](x.float().view(-1), scale.float().contiguous(), scaled, amax)
    q = scaled.view(x.shape).to(torch.float8_e4m3fn)
    return q, q.t().contiguous(), amax
