"""Large-vocabulary cross-entropy, forward and backward: mean loss and logit gradients over a 151936-token vocabulary (Qwen3)."""

import torch

# The language-model loss of Qwen3 (vocabulary 151936) on a 2048-token training chunk, bf16 logits. Labels equal
# to -100 (prompt and padding positions, about 10% here) are ignored. With n the number of counted tokens:
#   loss        = (1 / n) * sum over counted tokens of (logsumexp(logits[t]) - logits[t, label[t]])     float32
#   grad_logits = (softmax(logits[t]) - onehot(label[t])) / n for counted tokens, 0 for ignored ones     bf16
# Fused kernels (Liger, Unsloth) read the logits once or twice and never materialise float32 copies. Eager
# PyTorch casts 620 MB of logits to float32 and makes some eight passes over 1.2 GB: an estimated 3-4 ms on an H200.
NUM_TOKENS = 2048
VOCAB = 151936
IGNORE_INDEX = -100

MKB_META = {
    "category": "Loss",
    "tags": ["reduction", "loss", "backward"],
    "outliers": {"inputs": [0]},
}


def _wide(t):
    return t if t.dtype == torch.float64 else t.float()


def make_inputs(device="cuda"):
    logits = (2.0 * torch.randn(NUM_TOKENS, VOCAB, device=device)).to(torch.bfloat16)
    labels = torch.randint(0, VOCAB, (NUM_TOKENS,), device=device)
    ignored = torch.rand(NUM_TOKENS, device=device) < 0.1
    labels = torch.where(ignored, torch.full_like(labels, IGNORE_INDEX), labels)
    return [logits, labels]


def reference(logits, labels):
    wide = _wide(logits)
    counted = labels != IGNORE_INDEX
    count = counted.sum().clamp(min=1).to(wide.dtype)
    safe_labels = torch.where(counted, labels, torch.zeros_like(labels))
    log_z = torch.logsumexp(wide, dim=-1)
    picked = wide.gather(1, safe_labels.unsqueeze(1)).squeeze(1)
    loss = torch.where(counted, log_z - picked, torch.zeros_like(log_z)).sum() / count
    grad = torch.exp(wide - log_z.unsqueeze(1))
    grad.scatter_add_(1, safe_labels.unsqueeze(1), -torch.ones_like(picked).unsqueeze(1))
    grad = grad * (counted.to(wide.dtype) / count).unsqueeze(1)
    return loss.to(torch.float32), grad.to(logits.dtype)
