"""numba-cuda solution for 27_int4_w4a16_group_gemm: a skinny GEMM for the 16-token batch. Each thread owns one output
column and a slice of the packed weight words (coalesced along the columns), unpacks each word's eight nibbles,
dequantises them with its group's scale and zero point and keeps all 16 tokens' partial sums in registers; the
slices' sums are added into the float32 output atomically (cast to float16 by torch)."""

import torch
from numba import cuda, float32

TOKENS = 16
THREADS = 128
WORD_SLICES = 28  # the 1792 packed rows are split across this many blocks per column block
NIBBLES_PER_WORD = 8
GROUP_SIZE = 128


@cuda.jit
def _w4a16(x, qweight, scales, zeros, out):
    col = cuda.blockIdx.x * THREADS + cuda.threadIdx.x
    if col >= qweight.shape[1]:
        return
    words = qweight.shape[0]
    per_slice = (words + WORD_SLICES - 1) // WORD_SLICES
    start = cuda.blockIdx.y * per_slice
    acc = cuda.local.array(TOKENS, float32)
    for t in range(TOKENS):
        acc[t] = float32(0.0)
    for w in range(start, min(start + per_slice, words)):
        word = qweight[w, col]
        group = (w * NIBBLES_PER_WORD) // GROUP_SIZE
        scale = float32(scales[group, col])
        zero = float32(zeros[group, col])
        for p in range(NIBBLES_PER_WORD):
            weight = (float32((word >> (4 * p)) & 0xF) - zero) * scale
            k = w * NIBBLES_PER_WORD + p
            for t in range(TOKENS):
                acc[t] += float32(x[t, k]) * weight
    for t in range(TOKENS):
        cuda.atomic.add(out, (t, col), acc[t])


def solve(x, qweight, scales, zeros):
    assert x.shape[0] == TOKENS
    out_features = qweight.shape[1]
    out = torch.zeros(TOKENS, out_features, device=x.device, dtype=torch.float32)
    _w4a16[((out_features + THREADS - 1) // THREADS, WORD_SLICES), THREADS](x.contiguous(), qweight.contiguous(),
                                                                              scales.contiguous(), zeros.contiguous(),
                                                                              out)
    return out.to(x.dtype)
