#!/usr/bin/env python3
"""What each step of the grader's draw loop costs for one problem, on a GPU host: the problem's own make_inputs and
reference, its float64 anchor, and the grader's copies, parking and collection around them, each synchronised and
repeated, in milliseconds (median, min, max); first, what the timed region itself adds to a timed call (the clock's
floor). For diagnosis, beside bench/grading_profile.py: the profile says which functions a grading spends its time
in, this says what one draw's pieces cost at the problem's real sizes. It runs the problem's own code only, never a
candidate.

    python3 bench/draw_costs.py NN [NN ...] [--device cuda:0] [--repeats 5]
"""

from __future__ import annotations

import argparse
import gc
import glob
import importlib.util
import os
import sys
import time
from typing import Any, Callable

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "core", "grader"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("numbers", nargs="+")
    parser.add_argument("--device", default="cuda:0")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")  # as the grader's children run
    import torch

    from mkbgrader.child import draws, memory

    device = args.device
    torch.zeros(1, device=device)  # the context and the device's generator exist before the first draw

    def measure(label: str, step: Callable[[], Any], repeats: int = args.repeats) -> Any:
        times, result = [], None
        for _ in range(repeats):
            torch.cuda.synchronize()
            began = time.perf_counter()
            result = step()
            torch.cuda.synchronize()
            times.append((time.perf_counter() - began) * 1e3)
        times.sort()
        print(f"  {label:34} median {times[len(times) // 2]:9.2f} ms  min {times[0]:9.2f}  max {times[-1]:9.2f}")
        return result

    clock_floor(torch, device)
    for number in args.numbers:
        found = sorted(glob.glob(os.path.join(REPO, "problems", "*", f"{number}_*.py")))
        if not found:
            print(f"{number}: no such problem under problems/")
            continue
        spec = importlib.util.spec_from_file_location("mkb_problem", found[0])
        problem = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(problem)
        inputs = draws.draw_inputs(problem.make_inputs, device, 1)
        print(f"{os.path.relpath(found[0], REPO)}: inputs {memory.format_bytes(memory.tensor_bytes(inputs))}, "
              f"{memory.format_bytes(torch.cuda.mem_get_info()[0])} free")
        measure("draw (make_inputs)", lambda: draws.draw_inputs(problem.make_inputs, device, 1))
        measure("clone on the device", lambda: draws.clone_tree(inputs))
        measure("reference", lambda: problem.reference(*draws.clone_tree(inputs)))
        measure("float64 anchor", lambda: problem.reference(*draws.promote_to_float64(inputs)), 3)
        parked = measure("parked on the host", lambda: memory.moved(inputs, "cpu"), 3)
        measure("brought back to the device", lambda: memory.moved(parked, device), 3)
        del parked
        measure("gc.collect", gc.collect)
        measure("memory.release", lambda: memory.release(device))
        del inputs
        memory.release(device)
    return 0


def clock_floor(torch: Any, device: str, repeats: int = 200) -> None:
    """What the timed region adds to every timed call, both arms alike: an empty call timed as timing.Clock times a
    solve, beside the same events with the device and stream named here; and what one torch.cuda.is_available()
    costs, which torch's lookup of the current device calls. Under grader a869751e42c7 the clock named neither and
    its floor was 21.7 us against 12.2 (an H100); since 290f0ac it names both, and the two figures should agree."""
    from mkbgrader.child import timing

    clock = timing.Clock(device)
    stream = torch.cuda.current_stream(torch.device(device))

    def named() -> float:
        torch.cuda.synchronize(device)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record(stream)
        torch.cuda.synchronize(device)
        end.record(stream)
        end.synchronize()
        return float(start.elapsed_time(end))

    def spread(values_ms: list) -> str:
        values = sorted(v * 1e3 for v in values_ms)
        return f"median {values[len(values) // 2]:.1f} us (min {values[0]:.1f}, max {values[-1]:.1f})"

    as_clock = spread([clock.time_call(lambda: None)[0] for _ in range(repeats)])
    as_named = spread([named() for _ in range(repeats)])
    calls = []
    for _ in range(repeats):
        began = time.perf_counter()
        torch.cuda.is_available()
        calls.append((time.perf_counter() - began) * 1e3)
    print(f"the clock's floor on {device}: an empty call timed as timing.Clock does, {as_clock}; with the device and "
          f"stream named, {as_named}; torch.cuda.is_available() {spread(calls)} a call")


if __name__ == "__main__":
    sys.exit(main())
