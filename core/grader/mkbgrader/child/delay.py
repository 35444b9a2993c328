"""The calibration's slowed copy (mkb calibrate's A/B control, DESIGN §5.5): a device-side delay after each call of
a kernel, inside the timed region; grading and re-timing slow a kernel the same way."""

from __future__ import annotations

import time
from typing import Any, Callable

import torch


class DeviceDelay:
    """The calibration's slowdown (A/B control): a busy delay after a kernel's call, inside the timed region.

    On CUDA it enqueues torch.cuda._sleep (a spin of N SM cycles) on the current stream, so the final device-wide
    synchronisation waits for it; N comes from the delay and the spin's measured cycles per second (timed with CUDA
    events once). On CPU it busy-waits on perf_counter. References are taken before any candidate is imported.

    A DSL that launches on a stream of its own (JAX: Pallas) leaves its work unordered with torch's current stream, so
    a spin queued there would run beside the kernel instead of after it and slow the copy by less than its delay. For
    such a kernel (`own_stream`) the delay first waits for the whole device (torch.cuda.synchronize), then spins: the
    copy is slowed by at least the delay, the host round trip of that wait included.
    """

    def __init__(self, device: str) -> None:
        self.cuda = device.startswith("cuda")
        self.perf_counter = time.perf_counter
        self.how = "busy_wait"
        self.cycles_per_s = 0.0
        self.synchronize = torch.cuda.synchronize if self.cuda else None
        if self.cuda:
            self.sleep = getattr(torch.cuda, "_sleep", None)
            self.how = "torch.cuda._sleep" if self.sleep is not None else "busy_wait"
            if self.sleep is not None:
                self.cycles_per_s = self._calibrate()

    def _calibrate(self) -> float:
        cycles = 2_000_000
        rates = []
        for _ in range(3):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda.synchronize()
            start.record()
            self.sleep(cycles)
            end.record()
            end.synchronize()
            elapsed_s = start.elapsed_time(end) * 1e-3
            if elapsed_s > 0:
                rates.append(cycles / elapsed_s)
        return sorted(rates)[len(rates) // 2] if rates else 1.5e9

    def how_for(self, own_stream: bool) -> str:
        """The delay's mechanism in words, as the verdict records it."""
        if self.cuda and self.sleep is not None and own_stream:
            return "torch.cuda.synchronize + " + self.how
        return self.how

    def slowed(self, solve: Callable[..., Any], delay_s: float, own_stream: bool = False) -> Callable[..., Any]:
        if delay_s <= 0:
            return solve
        if self.cuda and self.sleep is not None:
            sleep, cycles = self.sleep, max(1, int(delay_s * self.cycles_per_s))
            synchronize = self.synchronize

            def slowed_cuda(*inputs: Any) -> Any:
                output = solve(*inputs)
                sleep(cycles)
                return output

            def slowed_after_own_stream(*inputs: Any) -> Any:
                output = solve(*inputs)
                synchronize()
                sleep(cycles)
                return output

            return slowed_after_own_stream if own_stream else slowed_cuda
        clock = self.perf_counter

        def slowed_cpu(*inputs: Any) -> Any:
            output = solve(*inputs)
            until = clock() + delay_s
            while clock() < until:
                pass
            return output

        return slowed_cpu
