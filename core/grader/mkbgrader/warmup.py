"""What a pre-started evaluation child does while it waits for its request: the CUDA context on its device, the
libraries a first draw loads (allocator, cuBLAS, common dtypes), and the DSL's import and first launch of the
grader's own tiny kernel. Runs in the child only, before any candidate code; the server never touches CUDA."""

from __future__ import annotations

from typing import Any


def warm_up(device: str, dsl: str, descriptor: dict) -> None:
    """Leaves the child's device and DSL ready and its memory as a fresh child's: no tensors held, no peak kept."""
    import torch

    from mkbgrader import evaluate  # noqa: F401 (normally preloaded by the server; a child of a bare server needs it)
    from mkbgrader.dsls import adapter_for

    cuda = device.startswith("cuda")
    if cuda:
        if not torch.cuda.is_available():
            return  # the grading itself reports a missing device
        torch.cuda.set_device(torch.device(device))
    _touch_libraries(torch, device)
    adapter = adapter_for(dsl, descriptor)
    if adapter.prepare() is None and cuda and adapter.name == "triton":
        _launch_triton(torch, device)
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    freeze_heap()


def freeze_heap() -> None:
    """Collects once, then moves every object alive now (torch's, the DSL's, the grader's) out of the collector's
    sight: the gc.collect of each memory release then walks only what the evaluation made (it walked all of torch,
    about 80 ms a call)."""
    import gc

    gc.collect()
    gc.freeze()


def _touch_libraries(torch: Any, device: str) -> None:
    base = torch.ones(64, 64, device=device)
    for dtype in (torch.float32, torch.float16, torch.bfloat16, torch.float64):
        value = base.to(dtype)
        (value @ value).sum().item()
        torch.softmax(value, dim=-1).max().item()
    torch.randint(0, 10, (64,), device=device).sum().item()


def _launch_triton(torch: Any, device: str) -> None:
    """One launch of a grader-owned copy kernel: Triton's driver, launcher and compile pipeline load here, not in the
    candidate's first draw (the compiled kernel comes from Triton's disk cache after the first time)."""
    import triton
    import triton.language as tl

    @triton.jit
    def _mkb_warm_copy(source, target, count, BLOCK: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offsets < count
        tl.store(target + offsets, tl.load(source + offsets, mask=mask), mask=mask)

    source = torch.arange(256, device=device, dtype=torch.float32)
    target = torch.empty_like(source)
    _mkb_warm_copy[(1,)](source, target, source.numel(), BLOCK=256)
    torch.cuda.synchronize()
