"""CUDA C++ solution: one block of 256 threads per (chunk, sequence and head). The chunk's keys sit in shared memory
(bf16, rows padded so that 32 rows read at one offset hit 32 banks); A = beta k k^T exp(g_i - g_j) below the diagonal
is built in shared memory, T = (I + A)^-1 is found in place by forward substitution (row i of T needs only rows
< i), and u = T (beta v), w = T (beta e^g k) are lower-triangular products with one output column per thread, values
read coalesced from global memory. fp32 throughout.
"""

import torch

import mkb_cuda

SOURCE = r"""
#define CHUNK 64
#define HEAD_DIM 128
#define K_STRIDE (HEAD_DIM + 2)
#define THREADS 256
#define ROW_GROUPS (THREADS / HEAD_DIM)  // rows handled in parallel in the products
#define ROWS_PER_THREAD (CHUNK / ROW_GROUPS)

__device__ __forceinline__ float bf16_bits_to_float(unsigned short bits) {
    return __uint_as_float(((unsigned int)bits) << 16);
}

__device__ __forceinline__ unsigned short float_to_bf16_bits(float value) {
    unsigned int bits = __float_as_uint(value);
    bits += 0x7fffu + ((bits >> 16) & 1u);  // round to nearest even (values here are finite)
    return (unsigned short)(bits >> 16);
}

// grid: (chunks, batch * heads)
extern "C" __global__ void __launch_bounds__(THREADS)
wy_transform(const unsigned short* __restrict__ k, const unsigned short* __restrict__ v,
             const unsigned short* __restrict__ beta, const float* __restrict__ g, unsigned short* __restrict__ w,
             unsigned short* __restrict__ u, int seq_len, int heads) {
    __shared__ __align__(16) unsigned short k_s[CHUNK][K_STRIDE];  // padded: rows start one bank apart
    __shared__ float m_s[CHUNK][CHUNK + 1];  // A, then T in place
    __shared__ float row_s[CHUNK];
    __shared__ float beta_s[CHUNK];
    __shared__ float g_s[CHUNK];
    const int tid = threadIdx.x;
    const int b = blockIdx.y / heads;
    const int h = blockIdx.y % heads;
    const long long first_row = ((long long)b * seq_len + (long long)blockIdx.x * CHUNK) * heads + h;
#define ROW(i) (first_row + (long long)(i) * heads)  // the (token, head) row of chunk position i
    for (int x = tid; x < CHUNK * HEAD_DIM / 2; x += THREADS) {  // 4-byte words: padded rows are not 16-aligned
        const int i = x / (HEAD_DIM / 2);
        const int c = (x % (HEAD_DIM / 2)) * 2;
        *reinterpret_cast<unsigned int*>(&k_s[i][c]) =
            *reinterpret_cast<const unsigned int*>(k + ROW(i) * HEAD_DIM + c);
    }
    if (tid < CHUNK) {
        beta_s[tid] = bf16_bits_to_float(beta[ROW(tid)]);
        g_s[tid] = g[ROW(tid)];
    }
    __syncthreads();
    if (tid == 0) {  // chunk-local cumulative log decay
        float running = 0.0f;
        for (int i = 0; i < CHUNK; ++i) {
            running += g_s[i];
            g_s[i] = running;
        }
    }
    __syncthreads();
    // A: each thread computes 16 of the 64 x 64 entries (only those below the diagonal are non-zero).
    for (int e = tid; e < CHUNK * CHUNK; e += THREADS) {
        const int i = e / CHUNK;
        const int j = e % CHUNK;
        float value = 0.0f;
        if (j < i) {
            float dot = 0.0f;
            for (int d = 0; d < HEAD_DIM; d += 2) {
                const unsigned int ki = *reinterpret_cast<const unsigned int*>(&k_s[i][d]);
                const unsigned int kj = *reinterpret_cast<const unsigned int*>(&k_s[j][d]);
                dot += bf16_bits_to_float(ki & 0xffffu) * bf16_bits_to_float(kj & 0xffffu) +
                       bf16_bits_to_float(ki >> 16) * bf16_bits_to_float(kj >> 16);
            }
            value = beta_s[i] * dot * expf(g_s[i] - g_s[j]);
        }
        m_s[i][j] = value;
    }
    __syncthreads();
    // T = (I + A)^-1 row by row: T_i = e_i - sum_{j < i} A_ij T_j. Row 0 is e_0.
    if (tid < CHUNK) {
        m_s[0][tid] = tid == 0 ? 1.0f : 0.0f;
    }
    __syncthreads();
    for (int i = 1; i < CHUNK; ++i) {
        if (tid < CHUNK) {
            row_s[tid] = m_s[i][tid];  // A's row i, read before it is overwritten
        }
        __syncthreads();
        if (tid < CHUNK) {
            float value = tid == i ? 1.0f : 0.0f;
            for (int j = tid; j < i; ++j) {  // T_jc = 0 for c > j
                value -= row_s[j] * m_s[j][tid];
            }
            m_s[i][tid] = value;
        }
        __syncthreads();
    }
    // u = T (beta v), w = T (beta e^g k): thread owns column c and rows r0, r0 + 2, ...
    const int c = tid % HEAD_DIM;
    const int r0 = tid / HEAD_DIM;
    float acc_u[ROWS_PER_THREAD];
    float acc_w[ROWS_PER_THREAD];
#pragma unroll
    for (int r = 0; r < ROWS_PER_THREAD; ++r) {
        acc_u[r] = 0.0f;
        acc_w[r] = 0.0f;
    }
    for (int j = 0; j < CHUNK; ++j) {
        const float vj = bf16_bits_to_float(v[ROW(j) * HEAD_DIM + c]) * beta_s[j];
        const float kj = bf16_bits_to_float(k_s[j][c]) * beta_s[j] * expf(g_s[j]);
#pragma unroll
        for (int r = 0; r < ROWS_PER_THREAD; ++r) {
            const float t = m_s[r0 + ROW_GROUPS * r][j];  // zero above the diagonal
            acc_u[r] += t * vj;
            acc_w[r] += t * kj;
        }
    }
#pragma unroll
    for (int r = 0; r < ROWS_PER_THREAD; ++r) {
        const long long out = ROW(r0 + ROW_GROUPS * r) * HEAD_DIM + c;
        u[out] = float_to_bf16_bits(acc_u[r]);
        w[out] = float_to_bf16_bits(acc_w[r]);
    }
#undef ROW
}
"""

CHUNK = 64
THREADS = 256
_kernel = mkb_cuda.compile(SOURCE, "wy_transform")


def solve(k, v, beta, g):
    k, v, beta, g = k.contiguous(), v.contiguous(), beta.contiguous(), g.contiguous()
    batch, seq_len, heads, dim = k.shape
    assert dim == 128 and seq_len % CHUNK == 0, "written for head dim 128 and whole 64-token chunks"
    w = torch.empty_like(k)
    u = torch.empty_like(v)
    _kernel((seq_len // CHUNK, batch * heads), (THREADS,), [k, v, beta, g, w, u, seq_len, heads])
    return w, u
