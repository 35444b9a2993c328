"""Backward pass of the gated delta rule over a training batch from a zero state (Qwen3-Next linear attention)."""

import torch

# Gated DeltaNet as in Qwen3-Next's linear-attention layers (32 value heads, the 16 key heads already repeated to
# them, key and value head dims 128), in training. Per head the [key, value] state follows
# S_t = a_t S_{t-1} + k_t^T (beta_t (v_t - a_t k_t S_{t-1})) with a_t = exp(g_t), from S_{-1} = 0, and o_t = q_t S_t
# / sqrt(128); q and k come L2-normalised. Given the upstream gradient do (and no gradient on the final state),
# return dq, dk, dv, dg and dbeta. The reference keeps every state of the forward pass and walks back through time:
# with G = dL/dS_t, r = beta (k G), u = v - a k S_{t-1}: dv = r, dk = beta G u - a S_{t-1} r, dbeta = (k G) . u,
# dg = a (<G, S_{t-1}> - r . (k S_{t-1})), and dL/dS_{t-1} = a (G - k^T r) + q_{t-1}^T do_{t-1} / sqrt(128).
# A micro-batch of 2,048 tokens as 16 sequences of 128 (short fine-tuning samples): the reference walks time step by
# step, so its cost grows with the sequence length (2 sequences of 1024 took 769 ms eager, too long for the grader's
# 80-odd reference calls per grading), while 16 sequences keep the same token count and every state at 33.5 MB.
# Eager on an H200: 117 ms measured (two Python loops over 128 steps, about 25 kernels per step).
BATCH = 16
SEQ_LEN = 128
HEADS = 32
KEY_DIM = 128
VALUE_DIM = 128

MKB_META = {
    "category": "Fusion",
    "tags": ["scan", "linear_attention", "backward", "reduction"],
    "outliers": {"inputs": [5]},
}


def make_inputs(device="cuda"):
    def unit(*shape):
        return torch.nn.functional.normalize(torch.randn(*shape, device=device), dim=-1).to(torch.bfloat16)

    q = unit(BATCH, SEQ_LEN, HEADS, KEY_DIM)
    k = unit(BATCH, SEQ_LEN, HEADS, KEY_DIM)
    v = torch.randn(BATCH, SEQ_LEN, HEADS, VALUE_DIM, device=device, dtype=torch.bfloat16)
    g = -torch.exp(-4.0 * torch.rand(BATCH, SEQ_LEN, HEADS, device=device, dtype=torch.float32))  # log decay
    beta = torch.sigmoid(torch.randn(BATCH, SEQ_LEN, HEADS, device=device)).to(torch.bfloat16)
    dout = torch.randn(BATCH, SEQ_LEN, HEADS, VALUE_DIM, device=device, dtype=torch.bfloat16)
    return [q, k, v, g, beta, dout]


def _wide(t):
    return t if t.dtype == torch.float64 else t.float()


def reference(q, k, v, g, beta, dout):
    batch, seq_len, heads, key_dim = q.shape
    scale = key_dim**-0.5
    beta_dtype = beta.dtype
    q, k, v, do = _wide(q), _wide(k), _wide(v), _wide(dout)
    a = torch.exp(_wide(g))  # [B, T, H]
    beta = _wide(beta)
    state = torch.zeros(batch, heads, key_dim, v.shape[-1], device=q.device, dtype=q.dtype)
    before = []  # S_{t-1} for every t
    for t in range(seq_len):
        before.append(state)
        recalled = torch.einsum("bhk,bhkv->bhv", k[:, t], state)
        delta = beta[:, t, :, None] * (v[:, t] - a[:, t, :, None] * recalled)
        state = a[:, t, :, None, None] * state + k[:, t, :, :, None] * delta[:, :, None, :]
    grads = {name: [None] * seq_len for name in ("q", "k", "v", "g", "beta")}
    grad_state = torch.zeros_like(state)
    for t in reversed(range(seq_len)):
        grad_state = grad_state + scale * q[:, t, :, :, None] * do[:, t, :, None, :]
        grads["q"][t] = scale * torch.einsum("bhkv,bhv->bhk", state, do[:, t])  # state is S_t here
        prev = before[t]
        kt, at, bt = k[:, t], a[:, t], beta[:, t]
        k_prev = torch.einsum("bhk,bhkv->bhv", kt, prev)
        u = v[:, t] - at[..., None] * k_prev
        k_grad = torch.einsum("bhk,bhkv->bhv", kt, grad_state)
        r = bt[..., None] * k_grad
        grads["v"][t] = r
        grads["k"][t] = (bt[..., None] * torch.einsum("bhkv,bhv->bhk", grad_state, u)
                         - at[..., None] * torch.einsum("bhkv,bhv->bhk", prev, r))
        grads["beta"][t] = (k_grad * u).sum(-1)
        grads["g"][t] = at * ((grad_state * prev).sum((-2, -1)) - (r * k_prev).sum(-1))
        grad_state = at[..., None, None] * (grad_state - kt[..., :, None] * r[..., None, :])
        state = prev
    dq, dk, dv = (torch.stack(grads[n], dim=1).to(dout.dtype) for n in ("q", "k", "v"))
    return dq, dk, dv, torch.stack(grads["g"], dim=1).to(g.dtype), torch.stack(grads["beta"], dim=1).to(beta_dtype)
