"""numba-cuda solution for 54_mamba2_chunk_state_passing: one thread per state element (sequence, head, p, n) walks
the chunks in order, writing the state that enters each chunk and carrying exp(decay) * running + local; the last
running state is the final state. Neighbouring threads take neighbouring state elements, so every load and store is
coalesced."""

import math

import torch
from numba import cuda, float32

THREADS = 256


@cuda.jit
def _pass_states(local, decay, entering, final):
    heads, dim, states = local.shape[2], local.shape[3], local.shape[4]
    per_sequence = heads * dim * states
    for index in range(cuda.grid(1), local.shape[0] * per_sequence, cuda.gridsize(1)):
        b = index // per_sequence
        h = (index // (dim * states)) % heads
        p = (index // states) % dim
        n = index % states
        running = float32(0.0)
        for c in range(local.shape[1]):
            entering[b, c, h, p, n] = running
            running = math.exp(decay[b, h, c]) * running + local[b, c, h, p, n]
        final[b, h, p, n] = running


def solve(local, decay):
    batch, chunks, heads, dim, states = local.shape
    entering = torch.empty(local.shape, device=local.device, dtype=torch.float32)
    final = torch.empty(batch, heads, dim, states, device=local.device, dtype=torch.float32)
    _pass_states[132 * 16, THREADS](local.contiguous(), decay.contiguous(), entering, final)
    return entering, final
