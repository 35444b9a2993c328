"""Device memory for the evaluation and validation children: how much is free, giving it back between steps, and
wording a step that cannot fit ("it needs 58.1 GiB and 40.2 GiB are free") or a context a failure has broken.

`MKB_GRADER_MEMORY_BYTES` (an integer number of bytes) caps what a child may use on its device; tests set it so a
step "does not fit" on CPU, and a user can set it to leave room for other work on the GPU.
"""

from __future__ import annotations

import gc
import os
import re
from typing import Any, Iterable, Optional

import torch

from mkbgrader.child import draws

BUDGET_VARIABLE = "MKB_GRADER_MEMORY_BYTES"

# A CUDA error of this kind leaves the context unusable: every later call in the process fails with it.
_STICKY_CUDA_ERRORS = ("device-side assert", "illegal memory access", "unspecified launch failure",
                       "misaligned address", "illegal instruction", "an illegal memory", "cuda error: launch failure")


def format_bytes(count: float) -> str:
    """1.5 GiB, 812 MiB, 4.0 KiB, 17 bytes."""
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if abs(count) >= size:
            value = count / size
            return f"{value:.1f} {unit}" if value < 100 else f"{value:.0f} {unit}"
    return f"{int(count)} bytes"


def configured_budget() -> Optional[int]:
    """The byte cap from MKB_GRADER_MEMORY_BYTES, or None when unset or not a non-negative integer."""
    raw = os.environ.get(BUDGET_VARIABLE, "").strip()
    if not raw:
        return None
    try:
        value = int(raw)
    except ValueError:
        return None
    return value if value >= 0 else None


def configure_allocator(device: str) -> None:
    """Before CUDA starts in a child: expandable segments, so memory freed by one step can be reused by a later,
    larger allocation instead of staying reserved in fragments (torch ≥ 2.1; an explicit user setting wins)."""
    if not device.startswith("cuda") or "PYTORCH_CUDA_ALLOC_CONF" in os.environ:
        return
    try:
        major, minor = (int(part) for part in torch.__version__.split(".")[:2])
    except ValueError:
        return
    if (major, minor) >= (2, 1):
        os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"


# Below this share of the device's memory free, release() hands the allocator's unused blocks back to the device.
CROWDED_FREE_SHARE = 0.25


def release(device: str) -> None:
    """Drops unreachable tensors; when the device is crowded, also hands the caching allocator's unused blocks back
    to it (for the other processes on the device: a pre-started child, a DSL's own allocator). Otherwise the blocks
    stay cached for the next draw, which allocates the same sizes: handing them back and allocating them again each
    draw cost more than the draw's comparison on a light problem. The room checks (Budget) count cached blocks as
    free, and torch frees them itself before an allocation fails."""
    gc.collect()
    if device.startswith("cuda"):
        try:
            free, total = torch.cuda.mem_get_info()
            if free < CROWDED_FREE_SHARE * total:
                torch.cuda.synchronize()
                torch.cuda.empty_cache()
        except RuntimeError:  # a broken context: the next real call reports it
            pass


def fits_uncrowded(budget: "Budget", needed: int) -> bool:
    """True when `needed` more bytes fit on the budget's device and leave CROWDED_FREE_SHARE of a CUDA device free;
    on the host, when they fit what Budget says is free."""
    free = budget.free_bytes()
    if free is None:
        return False
    reserve = 0
    if budget.device.startswith("cuda"):
        try:
            reserve = int(CROWDED_FREE_SHARE * torch.cuda.mem_get_info()[1])
        except RuntimeError:
            return False
    return needed + reserve <= free


def tensor_bytes(value: Any) -> int:
    return sum(t.numel() * t.element_size() for t in draws.tensors_in(value))


def promoted_bytes(value: Any) -> int:
    """What draws.promote_to_float64(value) allocates: float32/16/bf16 at 8 bytes an element, the rest cloned."""
    total = 0
    for tensor in draws.tensors_in(value):
        widened = tensor.dtype in (torch.float32, torch.float16, torch.bfloat16)
        total += tensor.numel() * (8 if widened else tensor.element_size())
    return total


def _host_available() -> Optional[int]:
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


class Budget:
    """Free memory on one device, as the child sees it. `held` is what the caller itself keeps alive; it only matters
    where the device cannot say what is in use (a CPU under MKB_GRADER_MEMORY_BYTES)."""

    def __init__(self, device: str) -> None:
        self.device = device
        self.cap = configured_budget()

    def free_bytes(self, held: int = 0) -> Optional[int]:
        if self.device.startswith("cuda"):
            try:
                free, _ = torch.cuda.mem_get_info()
                unused_reserved = torch.cuda.memory_reserved() - torch.cuda.memory_allocated()
                device_free = int(free + max(0, unused_reserved))
                if self.cap is not None:
                    return max(0, min(device_free, self.cap - torch.cuda.memory_allocated()))
                return device_free
            except (RuntimeError, AttributeError):
                return None
        if self.cap is not None:
            return max(0, self.cap - held)
        return _host_available()

    def shortfall(self, needed: int, held: int = 0, what: str = "it") -> str:
        """"" when `needed` bytes fit; otherwise why not, in words ("it needs 58.1 GiB and 40.2 GiB are free")."""
        if self.cap is None and self.device.startswith("cuda"):
            try:  # what the device has free alone is enough: the allocator's statistics need not be read
                if needed <= torch.cuda.mem_get_info()[0]:
                    return ""
            except (RuntimeError, AttributeError):
                pass
        free = self.free_bytes(held)
        if free is None or needed <= free:
            return ""
        where = "on the device" if self.device.startswith("cuda") else ""
        if self.cap is not None:
            where = f"under {BUDGET_VARIABLE}={self.cap}"
        return f"{what} needs {format_bytes(needed)} and {format_bytes(free)} are free {where}".rstrip()


def is_out_of_memory(error: BaseException) -> bool:
    if isinstance(error, MemoryError):
        return True
    text = str(error).lower()
    return "out of memory" in text or type(error).__name__ == "OutOfMemoryError"


def out_of_memory_words(error: BaseException, budget: Optional[Budget] = None) -> str:
    """"the device ran out of memory (tried to allocate 57.00 GiB; 40.2 GiB free)" for an allocation failure."""
    match = re.search(r"tried to allocate ([0-9.]+ ?[KMGT]?i?B)", str(error), re.IGNORECASE)
    asked = f"tried to allocate {match.group(1)}" if match else ""
    free = budget.free_bytes() if budget is not None else None
    parts = [p for p in (asked, f"{format_bytes(free)} free" if free is not None else "") if p]
    where = "the device" if budget is None or budget.device.startswith("cuda") else "the host"
    return f"{where} ran out of memory" + (f" ({'; '.join(parts)})" if parts else "")


def breaks_context(error: BaseException) -> bool:
    """True for a CUDA error after which the process's context is unusable (device-side assert, illegal access)."""
    text = str(error).lower()
    return any(marker in text for marker in _STICKY_CUDA_ERRORS)


def sum_bytes(values: Iterable[Any]) -> int:
    return sum(tensor_bytes(v) for v in values)


def is_on(value: Any, device: str) -> bool:
    """True when every tensor in a tree of them is on `device` already."""
    where = torch.device(device)
    return all(tensor.device == where for tensor in draws.tensors_in(value))


def moved(value: Any, device: str) -> Any:
    """A copy of a tree of tensors on `device` (lists, tuples and dicts kept; other values as they are): where the
    timing stage parks the inputs it re-checks later, and how it brings them back."""
    if isinstance(value, torch.Tensor):
        return value.detach().to(device, copy=True)
    if isinstance(value, list):
        return [moved(v, device) for v in value]
    if isinstance(value, tuple):
        return tuple(moved(v, device) for v in value)
    if isinstance(value, dict):
        return {k: moved(v, device) for k, v in value.items()}
    return value
