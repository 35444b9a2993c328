"""Mamba-2 SSD inter-chunk state passing: the state entering every 256-token chunk and the final state (Mamba2-2.7B)."""

import torch

# The middle stage of Mamba-2's chunked SSD (mamba_chunk_scan_combined's _state_passing_fwd): each chunk has produced
# its local final state (80 heads of [64, 128] float32, from a zero start) and the log of its total decay
# (dA_cumsum at the chunk's last position). The state entering chunk c is h_c, with h_0 = 0 and
# h_{c+1} = exp(decay_c) h_c + local_c; the returns are h_0 ... h_{C-1} and the final state h_C. Mamba2-2.7B
# (80 heads of dim 64, d_state 128), 2 sequences of 8192 tokens in 32 chunks of 256.
# Eager estimate on an H200: ~0.8 ms (a loop over 32 chunks, four small kernels each).
BATCH = 2
CHUNKS = 32
HEADS = 80
HEAD_DIM = 64
STATE_DIM = 128

MKB_META = {
    "category": "Math",
    "tags": ["scan", "linear_attention", "mamba", "elementwise"],
    "outliers": {"inputs": [0]},
}


def make_inputs(device="cuda"):
    local = torch.randn(BATCH, CHUNKS, HEADS, HEAD_DIM, STATE_DIM, device=device, dtype=torch.float32)
    decay = -2.0 * torch.rand(BATCH, HEADS, CHUNKS, device=device, dtype=torch.float32)  # log decay over a chunk
    return [local, decay]


def _wide(t):
    return t if t.dtype == torch.float64 else t.float()


def reference(local, decay):
    local = _wide(local)
    factor = torch.exp(_wide(decay))  # [B, H, C]
    running = torch.zeros_like(local[:, 0])
    entering = []
    for c in range(local.shape[1]):
        entering.append(running)
        running = factor[:, :, c, None, None] * running + local[:, c]
    return torch.stack(entering, dim=1), running
