"""CUDA C++ solution for 59_adamw_step: one fused pass, a thread per four elements (16-byte loads and stores), the step's scalars folded on the host."""

import torch

import mkb_cuda

SOURCE = r"""
struct AdamScalars {
    float beta1, one_minus_beta1, beta2, one_minus_beta2, decay, step_size, sqrt_bias_correction2, eps;
};

__device__ __forceinline__ void adam_one(float& p, float g, float& m, float& v, const AdamScalars& c) {
    m = c.beta1 * m + c.one_minus_beta1 * g;
    v = c.beta2 * v + c.one_minus_beta2 * g * g;
    const float denominator = sqrtf(v) / c.sqrt_bias_correction2 + c.eps;
    p = p * c.decay - c.step_size * m / denominator;
}

extern "C" __global__ void adamw_step(const float4* __restrict__ param, const float4* __restrict__ grad,
                                      const float4* __restrict__ exp_avg, const float4* __restrict__ exp_avg_sq,
                                      float4* __restrict__ param_out, float4* __restrict__ m_out,
                                      float4* __restrict__ v_out, long long vectors, float beta1,
                                      float one_minus_beta1, float beta2, float one_minus_beta2, float decay,
                                      float step_size, float sqrt_bias_correction2, float eps) {
    const AdamScalars c = {beta1, one_minus_beta1, beta2, one_minus_beta2, decay, step_size, sqrt_bias_correction2,
                           eps};
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < vectors;
         i += (long long)gridDim.x * blockDim.x) {
        float4 p = param[i], g = grad[i], m = exp_avg[i], v = exp_avg_sq[i];
        adam_one(p.x, g.x, m.x, v.x, c);
        adam_one(p.y, g.y, m.y, v.y, c);
        adam_one(p.z, g.z, m.z, v.z, c);
        adam_one(p.w, g.w, m.w, v.w, c);
        param_out[i] = p;
        m_out[i] = m;
        v_out[i] = v;
    }
}
"""

LR = 3e-4
BETA1 = 0.9
BETA2 = 0.95
ADAM_EPS = 1e-8
WEIGHT_DECAY = 0.1
THREADS = 256
_kernel = mkb_cuda.compile(SOURCE, "adamw_step")


def solve(param, grad, exp_avg, exp_avg_sq, step):
    param, grad = param.contiguous(), grad.contiguous()
    exp_avg, exp_avg_sq = exp_avg.contiguous(), exp_avg_sq.contiguous()
    vectors = param.numel() // 4  # 2^28 elements
    new_param = torch.empty_like(param)
    new_m = torch.empty_like(param)
    new_v = torch.empty_like(param)
    step_size = LR / (1.0 - BETA1**step)
    sqrt_bias_correction2 = (1.0 - BETA2**step) ** 0.5
    blocks = min((vectors + THREADS - 1) // THREADS, 132 * 16)
    _kernel((blocks,), (THREADS,), [param, grad, exp_avg, exp_avg_sq, new_param, new_m, new_v, mkb_cuda.int64(vectors),
                                    BETA1, 1.0 - BETA1, BETA2, 1.0 - BETA2, 1.0 - LR * WEIGHT_DECAY, step_size,
                                    sqrt_bias_correction2, ADAM_EPS])
    return new_param, new_m, new_v
