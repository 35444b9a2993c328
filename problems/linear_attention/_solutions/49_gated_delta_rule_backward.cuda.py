"""CUDA C++ solution: one block of 256 threads per (sequence, head, 64 value columns); a thread owns one column and
32 key rows of the state slice. The forward pass writes every state S_t of the slice to a float32 scratch buffer;
the backward pass keeps G = dL/dS_t in registers and reads S_t and S_{t-1} back. Sums over key rows go through
shared memory (4 row groups), sums over value columns through warp shuffles and a 2-warp combine; dq, dk, dg and
dbeta are per-slice partials that a last kernel adds in a fixed order and casts. fp32 throughout.
"""

import torch

import mkb_cuda

SOURCE = r"""
#define KEY_DIM 128
#define BLOCK_V 64
#define THREADS 256
#define ROW_GROUPS (THREADS / BLOCK_V)     // 4
#define ROWS (KEY_DIM / ROW_GROUPS)        // 32 key rows per thread
#define WARPS (THREADS / 32)
#define FULL_MASK 0xffffffffu

__device__ __forceinline__ float bf16_bits_to_float(unsigned short bits) {
    return __uint_as_float(((unsigned int)bits) << 16);
}

__device__ __forceinline__ unsigned short float_to_bf16_bits(float value) {
    unsigned int bits = __float_as_uint(value);
    bits += 0x7fffu + ((bits >> 16) & 1u);  // round to nearest even (values here are finite)
    return (unsigned short)(bits >> 16);
}

__device__ __forceinline__ float warp_sum(float value) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        value += __shfl_xor_sync(FULL_MASK, value, o);
    }
    return value;
}

// grid: (batch * heads, value dim / 64). Row `row` of the [B, T, H, *] inputs is (b * T + t) * H + h.
extern "C" __global__ void __launch_bounds__(THREADS)
gdn_backward(const unsigned short* __restrict__ q, const unsigned short* __restrict__ k,
             const unsigned short* __restrict__ v, const float* __restrict__ g,
             const unsigned short* __restrict__ beta, const unsigned short* __restrict__ dout,
             float* __restrict__ states, float* __restrict__ dq_part, float* __restrict__ dk_part,
             unsigned short* __restrict__ dv, float* __restrict__ dg_part, float* __restrict__ dbeta_part,
             int seq_len, int heads, int value_dim, float scale, long long key_part, long long gate_part) {
    __shared__ float q_s[KEY_DIM];
    __shared__ float k_s[KEY_DIM];
    __shared__ float v_s[BLOCK_V];
    __shared__ float do_s[BLOCK_V];
    __shared__ float scalars[2];                 // a_t, beta_t
    __shared__ float col_a[ROW_GROUPS][BLOCK_V]; // partial sums over key rows
    __shared__ float col_b[ROW_GROUPS][BLOCK_V];
    __shared__ float row_a[2][KEY_DIM];          // partial sums over value columns (two warps per row group)
    __shared__ float row_b[2][KEY_DIM];
    __shared__ float block_a[WARPS];
    __shared__ float block_b[WARPS];
    const int tid = threadIdx.x;
    const int lane = tid & 31;
    const int warp = tid >> 5;
    const int c = tid % BLOCK_V;   // value column within the slice
    const int rg = tid / BLOCK_V;  // key rows rg * 32 ... rg * 32 + 31
    const int bh = blockIdx.x;
    const int vb = blockIdx.y;
    const int b = bh / heads;
    const int h = bh % heads;
    const int col = vb * BLOCK_V + c;
    float* scratch = states + ((long long)bh * gridDim.y + vb) * seq_len * (KEY_DIM * BLOCK_V);
    dq_part += vb * key_part;
    dk_part += vb * key_part;
    dg_part += vb * gate_part;
    dbeta_part += vb * gate_part;

    float s[ROWS];
#pragma unroll
    for (int i = 0; i < ROWS; ++i) {
        s[i] = 0.0f;
    }
    for (int t = 0; t < seq_len; ++t) {
        const long long row = ((long long)b * seq_len + t) * heads + h;
        __syncthreads();  // the previous step is done with the shared vectors
        if (tid < KEY_DIM) {
            k_s[tid] = bf16_bits_to_float(k[row * KEY_DIM + tid]);
        } else if (tid < KEY_DIM + BLOCK_V) {
            v_s[tid - KEY_DIM] = bf16_bits_to_float(v[row * value_dim + vb * BLOCK_V + tid - KEY_DIM]);
        } else if (tid == KEY_DIM + BLOCK_V) {
            scalars[0] = expf(g[row]);
            scalars[1] = bf16_bits_to_float(beta[row]);
        }
        __syncthreads();
        float partial = 0.0f;
#pragma unroll
        for (int i = 0; i < ROWS; ++i) {
            partial += k_s[rg * ROWS + i] * s[i];
        }
        col_a[rg][c] = partial;
        __syncthreads();
        const float recalled = col_a[0][c] + col_a[1][c] + col_a[2][c] + col_a[3][c];
        const float a = scalars[0];
        const float delta = scalars[1] * (v_s[c] - a * recalled);
        float* out = scratch + (long long)t * (KEY_DIM * BLOCK_V);
#pragma unroll
        for (int i = 0; i < ROWS; ++i) {
            s[i] = a * s[i] + k_s[rg * ROWS + i] * delta;
            out[(rg * ROWS + i) * BLOCK_V + c] = s[i];
        }
    }
    __syncthreads();  // make every stored state visible to the block

    float grad[ROWS];
#pragma unroll
    for (int i = 0; i < ROWS; ++i) {
        grad[i] = 0.0f;
    }
    for (int t = seq_len - 1; t >= 0; --t) {
        const long long row = ((long long)b * seq_len + t) * heads + h;
        __syncthreads();
        if (tid < KEY_DIM) {
            q_s[tid] = bf16_bits_to_float(q[row * KEY_DIM + tid]);
            k_s[tid] = bf16_bits_to_float(k[row * KEY_DIM + tid]);
        } else if (tid < KEY_DIM + BLOCK_V) {
            const int j = tid - KEY_DIM;
            v_s[j] = bf16_bits_to_float(v[row * value_dim + vb * BLOCK_V + j]);
            do_s[j] = bf16_bits_to_float(dout[row * value_dim + vb * BLOCK_V + j]);
        } else if (tid == KEY_DIM + BLOCK_V) {
            scalars[0] = expf(g[row]);
            scalars[1] = bf16_bits_to_float(beta[row]);
        }
        __syncthreads();
        const float a = scalars[0];
        const float bt = scalars[1];
        const float dov = do_s[c];
        const float* current = scratch + (long long)t * (KEY_DIM * BLOCK_V);
        const float* before = scratch + (long long)(t - 1) * (KEY_DIM * BLOCK_V);
        float prev[ROWS];
        float k_prev = 0.0f, k_grad = 0.0f;
#pragma unroll
        for (int i = 0; i < ROWS; ++i) {
            const int r = rg * ROWS + i;
            prev[i] = t > 0 ? before[r * BLOCK_V + c] : 0.0f;
            grad[i] += scale * q_s[r] * dov;
            k_prev += k_s[r] * prev[i];
            k_grad += k_s[r] * grad[i];
        }
        col_a[rg][c] = k_prev;
        col_b[rg][c] = k_grad;
        __syncthreads();
        k_prev = col_a[0][c] + col_a[1][c] + col_a[2][c] + col_a[3][c];
        k_grad = col_b[0][c] + col_b[1][c] + col_b[2][c] + col_b[3][c];
        const float u = v_s[c] - a * k_prev;
        const float r_c = bt * k_grad;
        if (rg == 0) {
            dv[row * value_dim + col] = float_to_bf16_bits(r_c);
        }
        // Scalars: dbeta = sum_c k_grad u; dg = a (sum G * prev - sum_c r k_prev).
        float beta_term = rg == 0 ? k_grad * u : 0.0f;
        float gate_term = rg == 0 ? -r_c * k_prev : 0.0f;
        // Rows: dq_r = scale sum_c S_t[r, c] do_c; dk_r = sum_c (beta G u - a prev r).
#pragma unroll
        for (int i = 0; i < ROWS; ++i) {
            const int r = rg * ROWS + i;
            gate_term += grad[i] * prev[i];
            const float dq_sum = warp_sum(current[r * BLOCK_V + c] * dov);
            const float dk_sum = warp_sum(bt * grad[i] * u - a * prev[i] * r_c);
            if (lane == 0) {
                row_a[warp & 1][r] = dq_sum;
                row_b[warp & 1][r] = dk_sum;
            }
            grad[i] = a * (grad[i] - k_s[r] * r_c);  // dL/dS_{t-1}, before its q do term
        }
        beta_term = warp_sum(beta_term);
        gate_term = warp_sum(gate_term);
        if (lane == 0) {
            block_a[warp] = beta_term;
            block_b[warp] = gate_term;
        }
        __syncthreads();
        if (tid < KEY_DIM) {
            dq_part[row * KEY_DIM + tid] = scale * (row_a[0][tid] + row_a[1][tid]);
            dk_part[row * KEY_DIM + tid] = row_b[0][tid] + row_b[1][tid];
        } else if (tid == KEY_DIM) {
            float total_beta = 0.0f, total_gate = 0.0f;
            for (int w = 0; w < WARPS; ++w) {
                total_beta += block_a[w];
                total_gate += block_b[w];
            }
            dbeta_part[row] = total_beta;
            dg_part[row] = a * total_gate;
        }
    }
}

// Adds the value slices' partials in slice order and casts: bf16 (out_bf16 = 1) or float32.
extern "C" __global__ void sum_parts(const float* __restrict__ parts, void* __restrict__ out, long long n, int count,
                                     int out_bf16) {
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        float total = 0.0f;
        for (int p = 0; p < count; ++p) {
            total += parts[p * n + i];
        }
        if (out_bf16) {
            reinterpret_cast<unsigned short*>(out)[i] = float_to_bf16_bits(total);
        } else {
            reinterpret_cast<float*>(out)[i] = total;
        }
    }
}
"""

BLOCK_V = 64
THREADS = 256
_backward = mkb_cuda.compile(SOURCE, "gdn_backward")
_sum_parts = mkb_cuda.compile(SOURCE, "sum_parts")


def _summed(parts, like):
    out = torch.empty_like(like)
    n = like.numel()
    _sum_parts((min((n + THREADS - 1) // THREADS, 132 * 16),), (THREADS,),
               [parts, out, n, parts.shape[0], 1 if like.dtype == torch.bfloat16 else 0])
    return out


def solve(q, k, v, g, beta, dout):
    q, k, v, g, beta, dout = (t.contiguous() for t in (q, k, v, g, beta, dout))
    batch, seq_len, heads, key_dim = q.shape
    value_dim = v.shape[-1]
    assert key_dim == 128 and value_dim % BLOCK_V == 0, "written for key dim 128 and 64-column value slices"
    assert q.dtype == k.dtype == v.dtype == beta.dtype == dout.dtype == torch.bfloat16 and g.dtype == torch.float32
    blocks = value_dim // BLOCK_V
    states = torch.empty(batch * heads * blocks * seq_len * key_dim * BLOCK_V, device=q.device, dtype=torch.float32)
    dq = torch.empty(blocks, *q.shape, device=q.device, dtype=torch.float32)  # one partial per value slice
    dk = torch.empty(blocks, *k.shape, device=q.device, dtype=torch.float32)
    dg = torch.empty(blocks, *g.shape, device=q.device, dtype=torch.float32)
    dbeta = torch.empty(blocks, *beta.shape, device=q.device, dtype=torch.float32)
    dv = torch.empty_like(v)
    _backward((batch * heads, blocks), (THREADS,),
              [q, k, v, g, beta, dout, states, dq, dk, dv, dg, dbeta, seq_len, heads, value_dim, key_dim**-0.5,
               q.numel(), g.numel()])
    return _summed(dq, q), _summed(dk, k), dv, _summed(dg, g), _summed(dbeta, beta)
