"""Seeds and input drawing: fresh unpredictable seeds, inputs drawn on the grader's device, clones and snapshots."""

from __future__ import annotations

import inspect
from typing import Any, Callable

import torch

from mkbgrader.parent.seeds import fresh_seed  # noqa: F401 (the child's draws take their seeds here)


def accepts_device(make_inputs: Callable[..., Any]) -> bool:
    try:
        return "device" in inspect.signature(make_inputs).parameters
    except (TypeError, ValueError):
        return False


def seed_generators(device: str, seed: int) -> None:
    """torch.manual_seed for the generators a draw can use: the host's and the grader's device's. torch.manual_seed
    itself also counts the devices each call (about 0.2 ms), several times a draw."""
    torch.random.default_generator.manual_seed(seed)
    if device.startswith("cuda"):
        index = torch.device(device).index
        torch.cuda.default_generators[torch.cuda.current_device() if index is None else index].manual_seed(seed)


def draw_inputs(make_inputs: Callable[..., Any], device: str, seed: int) -> list:
    """Seeds torch's RNG, then calls make_inputs(device=...) when it takes one, else make_inputs()."""
    seed_generators(device, seed)
    inputs = make_inputs(device=device) if accepts_device(make_inputs) else make_inputs()
    if not isinstance(inputs, (list, tuple)):
        raise TypeError(f"make_inputs() returned a {type(inputs).__name__}, not a list")
    return list(inputs)


def clone_tree(value: Any) -> Any:
    """A deep copy of tensors inside lists/tuples/dicts (fresh storage, same values)."""
    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, list):
        return [clone_tree(v) for v in value]
    if isinstance(value, tuple):
        return tuple(clone_tree(v) for v in value)
    if isinstance(value, dict):
        return {k: clone_tree(v) for k, v in value.items()}
    return value


def promote_to_float64(value: Any) -> Any:
    """The anchor's inputs: float32/float16/bfloat16 tensors promoted to float64, everything else cloned."""
    if isinstance(value, torch.Tensor):
        if value.dtype in (torch.float32, torch.float16, torch.bfloat16):
            return value.detach().to(torch.float64)
        return value.detach().clone()
    if isinstance(value, list):
        return [promote_to_float64(v) for v in value]
    if isinstance(value, tuple):
        return tuple(promote_to_float64(v) for v in value)
    if isinstance(value, dict):
        return {k: promote_to_float64(v) for k, v in value.items()}
    return value


def exact_only(value: Any) -> bool:
    """True when nothing in `value` is floating (no float or complex tensor, no Python float or complex): every leaf
    of it is compared exactly, against the reference alone (compare.compare_outputs), never against an anchor."""
    if isinstance(value, torch.Tensor):
        return not (value.is_floating_point() or value.is_complex())
    if isinstance(value, (list, tuple)):
        return all(exact_only(v) for v in value)
    if isinstance(value, dict):
        return all(exact_only(v) for v in value.values())
    return not isinstance(value, (float, complex))


def tensors_in(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in tensors_in(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in tensors_in(v)]
    return []


def inplace_outputs(meta: dict, count: int) -> list[int]:
    """The input positions a problem declares as outputs written in place (MKB_META["inplace_outputs"]), within the
    draw's `count` inputs; [] when it declares none (then every input must be left unchanged)."""
    raw: Any = meta.get("inplace_outputs") if isinstance(meta, dict) else None
    if not isinstance(raw, list):
        return []
    return sorted({int(i) for i in raw if isinstance(i, int) and not isinstance(i, bool) and 0 <= i < count})


def mutation_note(before: list, after: list, allowed: tuple[int, ...] | list[int] = ()) -> str:
    """Empty when `after` holds the same values as the snapshot `before`, except at the `allowed` positions (inputs
    that are outputs by definition, compared as outputs instead); else which input changed, in words."""
    for i, (b, a) in enumerate(zip(before, after)):
        if i in allowed:
            continue
        for j, (tb, ta) in enumerate(zip(tensors_in(b), tensors_in(a))):
            if tb.shape != ta.shape or tb.dtype != ta.dtype:
                return f"input {i} changed shape or dtype during solve"
            same = torch.equal(tb, ta) or (tb.is_floating_point() and bool(
                ((tb == ta) | (torch.isnan(tb) & torch.isnan(ta))).all()))
            if not same:
                where = f"input {i}" + (f" (tensor {j})" if not isinstance(b, torch.Tensor) else "")
                return f"solve modified {where} in place; inputs must be left unchanged"
        if not isinstance(b, torch.Tensor) and not tensors_in(b) and b != a:
            return f"solve modified input {i} in place; inputs must be left unchanged"
    return ""


def total_bytes(value: Any) -> int:
    return sum(t.numel() * t.element_size() for t in tensors_in(value))
