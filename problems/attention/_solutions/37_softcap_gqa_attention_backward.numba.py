"""numba-cuda solution for 37_softcap_gqa_attention_backward: FlashAttention-2-style backward with the softcap folded
in, float32 on the CUDA cores (numba has no tensor-core access), in three kernels. One thread per (sequence, token,
query head) computes delta = rowsum(do * o). One block per (sequence, KV head, 32 keys) keeps its keys' K and V rows
in registers (a thread owns one key and 32 of the 256 dims, 8 threads a key) and walks both query heads of the
group and every causal query row in tiles of 16 staged in shared memory: each logit and do.v dot is summed over the
8 threads by warp shuffles, then p = exp(50 tanh(q.k / 800) - lse) and ds = p (do.v - delta) (1 - (c / 50)^2) update
dv += p do and dk += ds q in registers. One block per (sequence, query head, 32 queries) does the same for dq over
the causal keys. torch casts the bf16 inputs to float32 and the results back."""

import math

import torch
from numba import cuda, float32

HEAD_DIM = 256
THREADS = 256
LANES = 8  # threads sharing one key (or query) row
PER_THREAD = HEAD_DIM // LANES  # 32 dims a thread
ROWS = THREADS // LANES  # 32 key (or query) rows a block
TILE = 16  # rows staged in shared memory at a time
SOFTCAP = 50.0
SCALE = 256**-0.5
FULL = 0xFFFFFFFF


@cuda.jit(device=True)
def _lane_sum(value):
    value += cuda.shfl_xor_sync(FULL, value, 1)
    value += cuda.shfl_xor_sync(FULL, value, 2)
    value += cuda.shfl_xor_sync(FULL, value, 4)
    return value


@cuda.jit(device=True)
def _capped(dot):
    return float32(SOFTCAP) * math.tanh(dot * float32(SCALE / SOFTCAP))


@cuda.jit
def _delta(out, dout, delta):
    """delta[b, h, t] = sum_d out[b, t, h, d] dout[b, t, h, d]."""
    seq_len, heads = out.shape[1], out.shape[2]
    for index in range(cuda.grid(1), out.shape[0] * seq_len * heads, cuda.gridsize(1)):
        h = index % heads
        t = (index // heads) % seq_len
        b = index // (heads * seq_len)
        total = float32(0.0)
        for d in range(out.shape[3]):
            total += out[b, t, h, d] * dout[b, t, h, d]
        delta[b, h, t] = total


@cuda.jit
def _dkdv(q, k, v, dout, lse, delta, dk, dv):
    q_s = cuda.shared.array((TILE, HEAD_DIM), float32)
    do_s = cuda.shared.array((TILE, HEAD_DIM), float32)
    lse_s = cuda.shared.array(TILE, float32)
    delta_s = cuda.shared.array(TILE, float32)
    tid = cuda.threadIdx.x
    row = tid // LANES
    lane = tid % LANES
    seq_len = q.shape[1]
    group = q.shape[2] // k.shape[2]
    kv_heads = k.shape[2]
    b = cuda.blockIdx.y // kv_heads
    kv_h = cuda.blockIdx.y % kv_heads
    n0 = cuda.blockIdx.x * ROWS
    key = n0 + row
    k_r = cuda.local.array(PER_THREAD, float32)
    v_r = cuda.local.array(PER_THREAD, float32)
    dk_r = cuda.local.array(PER_THREAD, float32)
    dv_r = cuda.local.array(PER_THREAD, float32)
    for j in range(PER_THREAD):
        k_r[j] = k[b, key, kv_h, lane + LANES * j]
        v_r[j] = v[b, key, kv_h, lane + LANES * j]
        dk_r[j] = float32(0.0)
        dv_r[j] = float32(0.0)
    for g in range(group):
        h = kv_h * group + g
        for m0 in range(n0 // TILE * TILE, seq_len, TILE):
            cuda.syncthreads()  # the previous tile is used up
            for i in range(tid, TILE * HEAD_DIM, THREADS):
                r = i // HEAD_DIM
                d = i % HEAD_DIM
                q_s[r, d] = q[b, m0 + r, h, d]
                do_s[r, d] = dout[b, m0 + r, h, d]
            if tid < TILE:
                lse_s[tid] = lse[b, h, m0 + tid]
                delta_s[tid] = delta[b, h, m0 + tid]
            cuda.syncthreads()
            for m in range(TILE):
                dot = float32(0.0)
                dp = float32(0.0)
                for j in range(PER_THREAD):
                    dot += q_s[m, lane + LANES * j] * k_r[j]
                    dp += do_s[m, lane + LANES * j] * v_r[j]
                dot = _lane_sum(dot)
                dp = _lane_sum(dp)
                capped = _capped(dot)
                p = float32(0.0)
                if key <= m0 + m:
                    p = math.exp(capped - lse_s[m])
                ratio = capped / float32(SOFTCAP)
                ds = p * (dp - delta_s[m]) * (float32(1.0) - ratio * ratio)
                for j in range(PER_THREAD):
                    dv_r[j] += p * do_s[m, lane + LANES * j]
                    dk_r[j] += ds * q_s[m, lane + LANES * j]
    for j in range(PER_THREAD):
        dk[b, key, kv_h, lane + LANES * j] = dk_r[j] * float32(SCALE)
        dv[b, key, kv_h, lane + LANES * j] = dv_r[j]


@cuda.jit
def _dq(q, k, v, dout, lse, delta, dq):
    k_s = cuda.shared.array((TILE, HEAD_DIM), float32)
    v_s = cuda.shared.array((TILE, HEAD_DIM), float32)
    tid = cuda.threadIdx.x
    row = tid // LANES
    lane = tid % LANES
    heads = q.shape[2]
    group = heads // k.shape[2]
    b = cuda.blockIdx.y // heads
    h = cuda.blockIdx.y % heads
    kv_h = h // group
    m0 = cuda.blockIdx.x * ROWS
    query = m0 + row
    q_r = cuda.local.array(PER_THREAD, float32)
    do_r = cuda.local.array(PER_THREAD, float32)
    dq_r = cuda.local.array(PER_THREAD, float32)
    for j in range(PER_THREAD):
        q_r[j] = q[b, query, h, lane + LANES * j]
        do_r[j] = dout[b, query, h, lane + LANES * j]
        dq_r[j] = float32(0.0)
    row_lse = lse[b, h, query]
    row_delta = delta[b, h, query]
    for n0 in range(0, m0 + ROWS, TILE):
        cuda.syncthreads()
        for i in range(tid, TILE * HEAD_DIM, THREADS):
            r = i // HEAD_DIM
            d = i % HEAD_DIM
            k_s[r, d] = k[b, n0 + r, kv_h, d]
            v_s[r, d] = v[b, n0 + r, kv_h, d]
        cuda.syncthreads()
        for n in range(TILE):
            dot = float32(0.0)
            dp = float32(0.0)
            for j in range(PER_THREAD):
                dot += q_r[j] * k_s[n, lane + LANES * j]
                dp += do_r[j] * v_s[n, lane + LANES * j]
            dot = _lane_sum(dot)
            dp = _lane_sum(dp)
            capped = _capped(dot)
            p = float32(0.0)
            if n0 + n <= query:
                p = math.exp(capped - row_lse)
            ratio = capped / float32(SOFTCAP)
            ds = p * (dp - row_delta) * (float32(1.0) - ratio * ratio)
            for j in range(PER_THREAD):
                dq_r[j] += ds * k_s[n, lane + LANES * j]
    for j in range(PER_THREAD):
        dq[b, query, h, lane + LANES * j] = dq_r[j] * float32(SCALE)


def solve(q, k, v, out, dout, lse):
    batch, seq_len, query_heads, dim = q.shape
    kv_heads = k.shape[2]
    assert dim == HEAD_DIM and seq_len % ROWS == 0
    device = q.device
    q32, k32, v32, o32, do32 = (t.float().contiguous() for t in (q, k, v, out, dout))
    lse32 = lse.float().contiguous()
    delta = torch.empty(batch, query_heads, seq_len, device=device, dtype=torch.float32)
    _delta[132 * 8, 256](o32, do32, delta)
    dq = torch.empty(q.shape, device=device, dtype=torch.float32)
    dk = torch.empty(k.shape, device=device, dtype=torch.float32)
    dv = torch.empty(v.shape, device=device, dtype=torch.float32)
    _dkdv[(seq_len // ROWS, batch * kv_heads), THREADS](q32, k32, v32, do32, lse32, delta, dk, dv)
    _dq[(seq_len // ROWS, batch * query_heads), THREADS](q32, k32, v32, do32, lse32, delta, dq)
    return dq.to(q.dtype), dk.to(k.dtype), dv.to(v.dtype)
