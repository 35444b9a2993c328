"""The clocks of the evaluation child: one timed call with device-wide synchronisation, GPU time from CUDA's activity
records, and SM clock samples (their statistics are parent/timing.py)."""

from __future__ import annotations

import time
from typing import Any, Callable, Optional

import torch
from torch.profiler import ProfilerActivity, profile


class Clock:
    """One timed call: synchronize the whole device, start, call, synchronize the whole device, stop.

    The references to the synchronisation and timer functions are captured at construction (before the
    candidate is imported), so a candidate that replaces torch.cuda.synchronize or time.perf_counter does not
    change what is measured; the tampering check reports it separately.

    The device and the stream the events go on are named once, here: without them torch looks up the current
    device and stream inside the timed region on every call, about 9.5 us of a 21.7 us empty call on an H100
    (bench/draw_costs.py), which both arms carried and which pulled every speedup toward 1. The synchronisation is
    still of the whole device, so work the call left on other streams (JAX's, a candidate's) is inside the interval.
    """

    def __init__(self, device: str, kernel_only: bool = False) -> None:
        self.cuda = device.startswith("cuda")
        self.perf_counter = time.perf_counter
        self.flush_buffer = None
        self.persisting_reset: Optional[Callable[[], Any]] = None
        if self.cuda:
            named = torch.device(device)
            synchronize = torch.cuda.synchronize
            self.synchronize = lambda: synchronize(named)
            self.stream = torch.cuda.current_stream(named)
            self.event_type = torch.cuda.Event
            if kernel_only:
                props = torch.cuda.get_device_properties(named)
                l2 = int(getattr(props, "L2_cache_size", 0) or 0) or 64 * 1024 * 1024
                self.flush_buffer = torch.empty(max(2 * l2, 256 * 1024 * 1024) // 4, dtype=torch.int32, device=device)
                self.persisting_reset = _persisting_l2_reset()
        else:
            self.synchronize = lambda: None

    def time_call(self, call: Callable[[], Any]) -> tuple[float, Any]:
        """Returns (milliseconds, the call's result)."""
        if self.flush_buffer is not None:
            self.flush_buffer.zero_()
            if self.persisting_reset is not None:
                self.persisting_reset()
        if self.cuda:
            self.synchronize()
            start, end = self.event_type(enable_timing=True), self.event_type(enable_timing=True)
            start.record(self.stream)
            result = call()
            self.synchronize()
            end.record(self.stream)
            end.synchronize()
            return float(start.elapsed_time(end)), result
        begin = self.perf_counter()
        result = call()
        return (self.perf_counter() - begin) * 1e3, result


def _persisting_l2_reset() -> Optional[Callable[[], Any]]:
    """cudaCtxResetPersistingL2Cache through cuda-python when installed (torch has no API for it)."""
    try:
        from cuda.bindings import runtime  # type: ignore
    except ImportError:
        try:
            from cuda import cudart as runtime  # type: ignore
        except ImportError:
            return None
    reset = getattr(runtime, "cudaCtxResetPersistingL2Cache", None)
    return reset


class ClockSampler:
    """SM clock and throttle reasons via pynvml (nvidia-ml-py) when importable; otherwise records nothing."""

    # Throttle reasons that mean the clock was lowered by power or heat (not idle or an applications setting).
    _SLOWDOWN_MASK = 0x4 | 0x8 | 0x20 | 0x40 | 0x80 | 0x100  # SW power cap, HW slowdown, SW/HW thermal, power brake

    def __init__(self, device: str) -> None:
        self.handle = None
        self.nvml: Any = None
        if not device.startswith("cuda"):
            return
        try:
            import pynvml  # type: ignore  # nvidia-ml-py is optional: without it no clock is sampled

            pynvml.nvmlInit()
            index = torch.device(device).index or 0
            props = torch.cuda.get_device_properties(index)
            uuid = str(getattr(props, "uuid", "") or "")
            handle = None
            if uuid:
                try:
                    handle = pynvml.nvmlDeviceGetHandleByUUID(("GPU-" + uuid).encode())
                except Exception:
                    handle = None
            self.handle = handle or pynvml.nvmlDeviceGetHandleByIndex(index)
            self.nvml = pynvml
        except Exception:
            self.handle = None

    def sample(self) -> tuple[Optional[float], bool]:
        if self.handle is None:
            return None, False
        try:
            clock = float(self.nvml.nvmlDeviceGetClockInfo(self.handle, self.nvml.NVML_CLOCK_SM))
            reasons = self.nvml.nvmlDeviceGetCurrentClocksThrottleReasons(self.handle)
            return clock, bool(reasons & self._SLOWDOWN_MASK)
        except Exception:
            return None, False


class GpuTimer:
    """GPU time of one call: the summed durations of the device activities (kernels, memcpy, memset) that CUDA's
    activity records (CUPTI, through torch.profiler) report for it. CUDA only; `available` is False elsewhere or
    when the profiler cannot run, and then time_call measures nothing (None).

    The profiler and synchronisation references are taken at construction, before any candidate is imported.
    """

    def __init__(self, device: str) -> None:
        self.available = False
        self.source = "none"
        if not device.startswith("cuda"):
            return
        self.profile = profile
        self.activities = [ProfilerActivity.CUDA]
        self.synchronize = torch.cuda.synchronize
        self.available = True
        self.source = "torch.profiler"

    def time_call(self, call: Callable[[], Any]) -> tuple[Optional[float], Any]:
        """Returns (GPU milliseconds or None, the call's result). The call runs once, inside the profiler."""
        if not self.available:
            return None, call()
        self.synchronize()
        with self.profile(activities=self.activities) as prof:
            result = call()
            self.synchronize()
        try:
            return device_time_ms(prof), result
        except Exception:
            return None, result


def device_time_ms(prof: Any) -> Optional[float]:
    """Sums the device-side events' durations of a finished torch.profiler session, in milliseconds."""
    results = getattr(getattr(prof, "profiler", None), "kineto_results", None)
    if results is not None:
        total_us = 0.0
        found = False
        for event in results.events():
            if not str(event.device_type()).endswith("CUDA"):
                continue
            if hasattr(event, "duration_ns"):
                total_us += float(event.duration_ns()) / 1e3
            else:
                total_us += float(event.duration_us())
            found = True
        if found:
            return total_us / 1e3
    # Fallback: every op's own device time, summed (torch names it self_device_time_total from 2.4 on).
    total_us = 0.0
    for entry in prof.key_averages():
        value = getattr(entry, "self_device_time_total", None)
        if value is None:
            value = getattr(entry, "self_cuda_time_total", 0.0)
        total_us += float(value or 0.0)
    return total_us / 1e3 if total_us > 0 else None
