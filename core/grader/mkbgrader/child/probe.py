"""Measuring a device's peaks (run in a forked child): copy bandwidth and dense matmul rates per dtype."""

from __future__ import annotations

from typing import Callable, Optional

import torch

from mkbgrader.child import timing_lock


def _best_ms(run: Callable[[], object], repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        run()
        end.record()
        end.synchronize()
        best = min(best, start.elapsed_time(end))
    return best


def copy_gbps(device: str, gib: float = 2.0, repeats: int = 10) -> float:
    """Device-to-device copy of ≥ 1 GiB; counts read + write bytes; best of several."""
    count = int(gib * (1 << 30)) // 4
    source = torch.empty(count, dtype=torch.float32, device=device).fill_(1.0)
    target = torch.empty_like(source)
    target.copy_(source)
    ms = _best_ms(lambda: target.copy_(source), repeats)
    return 2 * count * 4 / (ms * 1e-3) / 1e9


def matmul_tflops(device: str, dtype_name: str, n: int = 8192, repeats: int = 10) -> Optional[float]:
    matmul = torch.backends.cuda.matmul
    try:
        if dtype_name == "float8_e4m3fn":
            if not hasattr(torch, "float8_e4m3fn") or not hasattr(torch, "_scaled_mm"):
                return None
            a = torch.randn(n, n, device=device).to(torch.float8_e4m3fn)
            b = torch.randn(n, n, device=device).to(torch.float8_e4m3fn).t()
            one = torch.tensor(1.0, device=device)

            def run() -> object:
                return torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
        else:
            dtype = {"float32": torch.float32, "tfloat32": torch.float32, "float16": torch.float16,
                     "bfloat16": torch.bfloat16}[dtype_name]
            matmul.allow_tf32 = dtype_name == "tfloat32"
            a = torch.randn(n, n, device=device, dtype=dtype)
            b = torch.randn(n, n, device=device, dtype=dtype)

            def run() -> object:
                return a @ b
        run()
        ms = _best_ms(run, repeats)
    except (RuntimeError, TypeError):
        return None
    finally:
        matmul.allow_tf32 = False
    return 2 * n**3 / (ms * 1e-3) / 1e12


def probe_device(device: str) -> dict:
    if not torch.cuda.is_available():
        raise RuntimeError("torch sees no CUDA device; the probe needs one")
    torch.cuda.set_device(torch.device(device))
    props = torch.cuda.get_device_properties(torch.device(device))
    uuid = str(getattr(props, "uuid", "") or "")
    rates = {}
    for name in ("float32", "tfloat32", "float16", "bfloat16", "float8_e4m3fn"):
        rate = matmul_tflops(device, name)
        if rate is not None:
            rates[name] = rate
    return {"name": props.name, "uuid": uuid, "compute_capability": f"{props.major}.{props.minor}",
            "copy_gbps": copy_gbps(device), "tflops": rates,
            "memory_gib": props.total_memory / (1 << 30)}


def probe_work(device: str, device_lock: str, send: Callable[[dict], None]) -> None:
    """The probe child's whole job (the server names it in its ChildTask): the peaks, measured holding the device's
    timing lock (no pre-started child warms up beside them), or the error in one line."""
    try:
        with timing_lock.held(device_lock):
            peaks = probe_device(device)
        send({"t": "probe", "device": peaks})
    except Exception as error:
        send({"t": "error", "message": f"{type(error).__name__}: {error}"})
