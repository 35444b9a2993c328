"""Backward pass of causal GQA attention with tanh logit soft-capping (Gemma-2-9B: 16 query heads, head dim 256)."""

import torch

# Gemma-2-9B's attention (16 query heads sharing 8 KV heads, head dim 256, query_pre_attn_scalar 256 so the scale is
# 1/16, attn_logit_softcapping 50) in training: logits c = 50 tanh(q k^T / (16 * 50)) under a causal mask, softmax,
# o = p v. Given the forward's output o and its natural-log sum-exp per row (as FlashAttention keeps them) and the
# upstream gradient do, return dq, dk and dv; dk and dv sum over the two query heads of each KV head. The softcap's
# derivative is 1 - (c / 50)^2. A batch of 2 sequences of 2048 tokens, bf16, layout [batch, tokens, heads, dim].
# Eager estimate on an H200: ~8 ms (six [2, 16, 2048, 2048] float32 intermediates and five batched GEMMs).
# numba is below eager here: the causal half of the five products is 172 GFLOP, so beating eager's 12.2 ms
# (bench/results/suite-2dsl-h200.md; its cuBLAS float32 GEMMs run the full 344 GFLOP) needs at least 14 TFLOP/s of
# float32 FMAs with the softcap's tanh and exp in the loop, and numba has no tensor cores (no MMA); its
# FlashAttention-2-style solution (K, V rows in registers, dot products summed by warp shuffles) was measured at 0.33x
# of eager on an H200, and the suite's tiled numba GEMM does not reach that rate either (29_fp8_block_scaled_gemm:
# 0.13x, about 6 TFLOP/s).
BATCH = 2
SEQ_LEN = 2048
QUERY_HEADS = 16
KV_HEADS = 8
HEAD_DIM = 256
SOFTCAP = 50.0
SCALE = 256**-0.5

MKB_META = {
    "category": "Fusion",
    "tags": ["attention", "backward", "gqa", "causal", "softcap", "reduction"],
    "outliers": {"inputs": [4]},
}


def _heads(x, group):  # [B, T, H, D] -> [B, H * group, T, D] in float
    return x.transpose(1, 2).repeat_interleave(group, dim=1)


def _capped_logits(qh, kh):
    return SOFTCAP * torch.tanh(torch.matmul(qh, kh.transpose(-1, -2)) * (SCALE / SOFTCAP))


def make_inputs(device="cuda"):
    q = torch.randn(BATCH, SEQ_LEN, QUERY_HEADS, HEAD_DIM, device=device, dtype=torch.bfloat16)
    k = torch.randn(BATCH, SEQ_LEN, KV_HEADS, HEAD_DIM, device=device, dtype=torch.bfloat16)
    v = torch.randn(BATCH, SEQ_LEN, KV_HEADS, HEAD_DIM, device=device, dtype=torch.bfloat16)
    group = QUERY_HEADS // KV_HEADS
    qh, kh, vh = q.float().transpose(1, 2), _heads(k.float(), group), _heads(v.float(), group)
    causal = torch.ones(SEQ_LEN, SEQ_LEN, device=device, dtype=torch.bool).tril()
    logits = _capped_logits(qh, kh).masked_fill(~causal, float("-inf"))
    lse = torch.logsumexp(logits, dim=-1)  # [B, Hq, T]
    out = torch.matmul(torch.exp(logits - lse.unsqueeze(-1)), vh).transpose(1, 2).to(torch.bfloat16)
    dout = torch.randn(BATCH, SEQ_LEN, QUERY_HEADS, HEAD_DIM, device=device, dtype=torch.bfloat16)
    return [q, k, v, out, dout, lse.contiguous()]


def _wide(t):
    return t if t.dtype == torch.float64 else t.float()


def reference(q, k, v, out, dout, lse):
    batch, seq_len, query_heads, dim = q.shape
    kv_heads = k.shape[2]
    group = query_heads // kv_heads
    qh = _wide(q).transpose(1, 2)
    kh, vh = _heads(_wide(k), group), _heads(_wide(v), group)
    oh, doh = _wide(out).transpose(1, 2), _wide(dout).transpose(1, 2)
    capped = _capped_logits(qh, kh)  # [B, Hq, T, T]
    causal = torch.ones(seq_len, seq_len, device=q.device, dtype=torch.bool).tril()
    p = torch.exp(capped.masked_fill(~causal, float("-inf")) - _wide(lse).unsqueeze(-1))
    dv = torch.matmul(p.transpose(-1, -2), doh)
    dp = torch.matmul(doh, vh.transpose(-1, -2))
    delta = (doh * oh).sum(dim=-1, keepdim=True)
    ds = p * (dp - delta) * (1.0 - (capped / SOFTCAP) ** 2)  # the cap's derivative, from the unmasked logits
    dq = torch.matmul(ds, kh) * SCALE
    dk = torch.matmul(ds.transpose(-1, -2), qh) * SCALE

    def per_kv(x):  # [B, Hq, T, D] -> [B, T, Hkv, D], summing each KV head's query heads
        return x.view(batch, kv_heads, group, seq_len, dim).sum(dim=2).transpose(1, 2)

    return dq.transpose(1, 2).to(q.dtype), per_kv(dk).to(k.dtype), per_kv(dv).to(v.dtype)
