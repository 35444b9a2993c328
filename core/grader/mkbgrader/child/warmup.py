"""What a pre-started evaluation child does while it waits for its request: the CUDA context on its device, the
libraries a first draw loads (allocator, cuBLAS, common dtypes), the timing set-up (NVML, profiler, events), and
the DSL's import and first launch of the grader's own tiny kernel. Runs in the child only, before any candidate
code; the server never touches CUDA."""

from __future__ import annotations

from typing import Callable, Sequence

import torch

from mkbgrader.child import evaluate  # noqa: F401 (normally preloaded by the server; a child of a bare server needs it)
from mkbgrader.child import timing, timing_lock
from mkbgrader.child.dsls import adapter_for
from mkbgrader.parent.sandbox import freeze_heap


def warm_up_under_lock(device: str, dsls: Sequence[tuple[str, dict]], lock_path: str,
                       task_waiting: Callable[[float], bool]) -> None:
    """A warm-up runs holding the device's timing lock (child/timing_lock.py; `lock_path` is the device lock mkb
    holds around each grading), so it may run beside the current grading's correctness draws but never beside a
    timed kernel, on a GPU or on the CPU alike. When the child's own request arrives before the lock is free, the
    child stays cold rather than make its own grading wait."""
    if not lock_path:
        warm_up(device, dsls)
        return
    with timing_lock.held_unless_waited_for(lock_path, task_waiting) as locked:
        if locked:
            warm_up(device, dsls)
            return
    freeze_heap()  # no lock to be had, or the work is here: better cold than beside someone's timing


def warm_up(device: str, dsls: Sequence[tuple[str, dict]]) -> None:
    """Leaves the child's device and DSLs ready (each (dsl, descriptor) of `dsls`: one for a grading, those of its
    kernels for a re-timing) and its memory as a fresh child's: no tensors held, no peak kept."""
    cuda = device.startswith("cuda")
    if cuda:
        if not torch.cuda.is_available():
            return  # the grading itself reports a missing device
        torch.cuda.set_device(torch.device(device))
    _touch_libraries(device)
    if cuda:
        _touch_timing(device)
    for dsl, descriptor in dsls:
        adapter = adapter_for(dsl, descriptor)
        if adapter.prepare() is None and cuda and adapter.name in _FIRST_LAUNCHES:
            try:
                _FIRST_LAUNCHES[adapter.name](device)
            except Exception:  # best effort: a child whose warm-up launch failed is as good as a cold one
                pass
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    freeze_heap()


def _touch_libraries(device: str) -> None:
    base = torch.ones(64, 64, device=device)
    for dtype in (torch.float32, torch.float16, torch.bfloat16, torch.float64):
        value = base.to(dtype)
        (value @ value).sum().item()
        torch.softmax(value, dim=-1).max().item()
    torch.randint(0, 10, (64,), device=device).sum().item()


def _touch_timing(device: str) -> None:
    """What an evaluation's timing set-up loads on first use: NVML for the clock samples (its init stays done for the
    process), the profiler module of the GPU timer, and one kernel-only timed call (its flush buffer, cuda-python's
    runtime for the persisting-L2 reset and an event pair)."""
    timing.ClockSampler(device).sample()
    timing.GpuTimer(device)
    timing.Clock(device, kernel_only=True).time_call(lambda: None)


def _launch_triton(device: str) -> None:
    from mkbgrader.child.warmup_triton import launch_once  # needs triton, which is optional

    launch_once(device)


def _launch_pallas(device: str) -> None:
    from mkbgrader.child.warmup_pallas import launch_once  # needs jax, which is optional

    launch_once(device)


def _launch_numba(device: str) -> None:
    from mkbgrader.child.warmup_numba import launch_once  # needs numba-cuda, which is optional

    launch_once(device)


# The DSLs whose first launch the warm-up makes with a tiny kernel of the grader's own.
_FIRST_LAUNCHES: dict[str, Callable[[str], None]] = {"triton": _launch_triton, "pallas": _launch_pallas,
                                                     "numba": _launch_numba}
