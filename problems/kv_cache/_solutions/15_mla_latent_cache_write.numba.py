"""numba-cuda solution for 15_mla_latent_cache_write: torch copies the cache, then one numba launch with four tensor
arguments does all the math on the bf16 bits.

One warp per token, four tokens a block of 128 threads. The 576-wide bf16 entry is read as 288 32-bit words of two bf16
each (an int32 view; numba reads no bfloat16): lane l holds compressed words l + 32 j (j < 8, coalesced), and a bf16 is
the top half of a float32, so a word widens to its two values with a shift and a mask. The sum of squares of the 512
compressed values is added in float32 across the warp with shuffles (no shared memory, no barrier), and each value is
scaled by 1/sqrt(mean + eps) and its norm weight (read as words the same way). Rotary pair p (dims 2p, 2p + 1,
interleaved as in GPT-J) is exactly rotary word p, so lane p rotates pair p with its position's cos and sin (float32
table). Each result is rounded to bf16 by integer ops (round to nearest, ties to even, NaN kept quiet: torch's own
rounding), two packed into a word, and the 288 words are stored into the token's slot of the copied cache (an int32 view
of it). numba converts every tensor argument on the host at each launch, so the three small inputs travel as one:
torch.cat packs the positions and the slot mapping (int64, read as the low halves of their int32 views: both are below
2**31) and the norm weight's words into one int32 tensor, and the launch takes four tensors (the latent, that pack, the
cos/sin table, the cache) where six would be natural. An earlier solution cast the latent and weight to float32 with
torch, wrote a float32 entry, cast it to bf16 with torch, copied the cache and scattered with a second launch: six torch
ops and two launches (0.76x), where this is a clone, a cat and one launch (1.22x [1.18, 1.25] on an H100,
2026-12-06)."""

import math

import torch
from numba import cuda, float32, int32, int64
from numba.cuda import libdevice

KV_LORA_RANK = 512
RANK_WORDS = 256  # KV_LORA_RANK // 2: compressed words of a row
WORDS = 288  # (512 + 64) // 2: words of a row
LANE_WORDS = 8  # RANK_WORDS // 32: compressed words per lane
HALF = 32  # rotary pairs: one per lane
TOKENS_PER_BLOCK = 4
THREADS = 128  # 32 * TOKENS_PER_BLOCK
EPS = 1e-6
FULL_MASK = 0xFFFFFFFF


@cuda.jit(device=True)
def _low(word):
    return libdevice.int_as_float(int32(word << 16))


@cuda.jit(device=True)
def _high(word):
    return libdevice.int_as_float(int32(word & -65536))


@cuda.jit(device=True)
def _bf16(value):
    """The bf16 bits (0 .. 0xFFFF) of a float32, rounded to nearest even; NaN stays a quiet NaN."""
    bits = int64(libdevice.float_as_int(value)) & 0xFFFFFFFF
    if (bits & 0x7FFFFFFF) > 0x7F800000:
        return (bits >> 16) | 0x40
    return (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16


@cuda.jit(device=True)
def _pack(low, high):
    """Two bf16 values as one int32 word (low in the lower half)."""
    word = _bf16(low) | (_bf16(high) << 16)
    return int32(word - ((word & 0x80000000) << 1))


@cuda.jit
def _write(latent, pack, cos_sin, cache):
    """latent: [tokens, 288] int32 words; pack: int32, [2 tokens] positions (int64 as int32 pairs), [2 tokens] slot
    mapping (likewise), [256] norm weight words; cos_sin: [positions, 64] float32; cache: [pages, page_size, 288]
    int32 words, written in place."""
    lane = cuda.threadIdx.x & 31
    token = cuda.blockIdx.x * TOKENS_PER_BLOCK + (cuda.threadIdx.x >> 5)
    if token >= latent.shape[0]:  # a whole warp leaves together: the shuffles below stay full-warp
        return
    words = cuda.local.array(LANE_WORDS, int32)
    squares = float32(0.0)
    for j in range(LANE_WORDS):
        word = latent[token, lane + 32 * j]
        words[j] = word
        low = _low(word)
        high = _high(word)
        squares += low * low + high * high
    squares += cuda.shfl_xor_sync(FULL_MASK, squares, 16)
    squares += cuda.shfl_xor_sync(FULL_MASK, squares, 8)
    squares += cuda.shfl_xor_sync(FULL_MASK, squares, 4)
    squares += cuda.shfl_xor_sync(FULL_MASK, squares, 2)
    squares += cuda.shfl_xor_sync(FULL_MASK, squares, 1)
    inverse_rms = float32(1.0) / math.sqrt(squares * float32(1.0 / KV_LORA_RANK) + float32(EPS))

    tokens = latent.shape[0]
    slot = pack[2 * (tokens + token)]
    page_size = cache.shape[1]
    page = slot // page_size
    row = slot - page * page_size
    for j in range(LANE_WORDS):
        word = words[j]
        scale = pack[4 * tokens + lane + 32 * j]
        low = _low(word) * inverse_rms * _low(scale)
        high = _high(word) * inverse_rms * _high(scale)
        cache[page, row, lane + 32 * j] = _pack(low, high)

    position = pack[2 * token]
    cos = cos_sin[position, lane]
    sin = cos_sin[position, HALF + lane]
    pair = latent[token, RANK_WORDS + lane]
    even = _low(pair)
    odd = _high(pair)
    cache[page, row, RANK_WORDS + lane] = _pack(even * cos - odd * sin, odd * cos + even * sin)


_launches = {}


def solve(kv_latent, norm_weight, positions, cos_sin_cache, kv_cache, slot_mapping):
    tokens, width = kv_latent.shape
    assert width == 2 * WORDS and norm_weight.shape[0] == KV_LORA_RANK and cos_sin_cache.shape[1] == 2 * HALF
    blocks = (tokens + TOKENS_PER_BLOCK - 1) // TOKENS_PER_BLOCK
    launch = _launches.get(blocks)
    if launch is None:
        launch = _launches[blocks] = _write[blocks, THREADS]
    assert positions.dtype == torch.int64 and slot_mapping.dtype == torch.int64
    new_cache = kv_cache.clone()
    pack = torch.cat((positions.view(torch.int32), slot_mapping.view(torch.int32), norm_weight.view(torch.int32)))
    launch(kv_latent.view(torch.int32), pack, cos_sin_cache, new_cache.view(torch.int32))
    return new_cache
