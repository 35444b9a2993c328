"""numba-cuda solution for 20_qk_rmsnorm_rope: one block of head-dim threads per (token, query-or-key head) reduces
the head's squares through shared memory, keeps the normalised head in shared memory and rotates it (neox halves,
cos|sin read at the token's position) in float32. bfloat16 tensors are cast with torch (numba reads no bfloat16)."""

import math

import torch
from numba import cuda, float32

HEAD_DIM = 128
QUERY_HEADS = 32
KV_HEADS = 8
EPS = 1e-6


@cuda.jit
def _norm_rope(qkv, q_weight, k_weight, positions, cos_sin, rotated_query, rotated_key):
    heads = QUERY_HEADS + KV_HEADS
    token = cuda.blockIdx.x // heads
    head = cuda.blockIdx.x % heads
    d = cuda.threadIdx.x
    half = HEAD_DIM // 2
    x = qkv[token, head * HEAD_DIM + d]  # query heads, then key heads: contiguous in the fused row
    partial = cuda.shared.array(HEAD_DIM, float32)
    normed = cuda.shared.array(HEAD_DIM, float32)
    partial[d] = x * x
    cuda.syncthreads()
    stride = HEAD_DIM // 2
    while stride > 0:
        if d < stride:
            partial[d] += partial[d + stride]
        cuda.syncthreads()
        stride //= 2
    weight = q_weight[d] if head < QUERY_HEADS else k_weight[d]
    normed[d] = x * (float32(1.0) / math.sqrt(partial[0] / float32(HEAD_DIM) + float32(EPS))) * weight
    cuda.syncthreads()
    position = positions[token]
    pair = d % half
    cos = cos_sin[position, pair]
    sin = cos_sin[position, half + pair]
    if d < half:
        value = normed[d] * cos - normed[d + half] * sin
    else:
        value = normed[d] * cos + normed[d - half] * sin
    if head < QUERY_HEADS:
        rotated_query[token, head, d] = value
    else:
        rotated_key[token, head - QUERY_HEADS, d] = value


def solve(qkv, q_norm_weight, k_norm_weight, positions, cos_sin_cache):
    tokens = qkv.shape[0]
    rotated_query = torch.empty(tokens, QUERY_HEADS, HEAD_DIM, device=qkv.device, dtype=torch.float32)
    rotated_key = torch.empty(tokens, KV_HEADS, HEAD_DIM, device=qkv.device, dtype=torch.float32)
    _norm_rope[tokens * (QUERY_HEADS + KV_HEADS), HEAD_DIM](qkv.float(), q_norm_weight.float(), k_norm_weight.float(),
                                                             positions.contiguous(), cos_sin_cache.contiguous(),
                                                             rotated_query, rotated_key)
    return rotated_query.to(qkv.dtype), rotated_key.to(qkv.dtype)
