"""Comparing a candidate's outputs with the reference and anchor in the child: raw error numbers per output.

The evaluation child calls `compare_outputs` (it holds the tensors); the parent judges the numbers
(parent/judging.py, by the contract) and words the first failure, so a candidate cannot reach the judgement.
"""

from __future__ import annotations

import math
from typing import Any

import torch

FLOAT_DTYPES = (torch.float64, torch.float32, torch.float16, torch.bfloat16)


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).replace("torch.", "")


def is_floating(tensor: torch.Tensor) -> bool:
    return tensor.is_floating_point() or tensor.is_complex()


def _index_tuple(flat_index: int, shape: tuple) -> list[int]:
    index = []
    for size in reversed(shape):
        index.append(flat_index % size if size else 0)
        flat_index = flat_index // size if size else 0
    return list(reversed(index))


def _python_scalar(item: Any) -> Any:
    if isinstance(item, complex):
        return str(item)
    if isinstance(item, float) and not math.isfinite(item):
        return str(item)
    return item


def _scalar(value: torch.Tensor) -> Any:
    return _python_scalar(value.item())


def _as_tensor(value: Any) -> torch.Tensor:
    if isinstance(value, bool):
        return torch.tensor(value)
    if isinstance(value, int):
        return torch.tensor(value, dtype=torch.int64)
    return torch.tensor(value, dtype=torch.float64)


def _float_leaf(path: str, cand: torch.Tensor, ref: torch.Tensor, anchor: torch.Tensor) -> dict:
    # Compared in float64 where the outputs live: on a GPU this takes milliseconds, where copying a 128 MB output
    # and its anchor to the host and comparing there took about a second per draw. Every number is computed on the
    # device and read back at once (one synchronisation a leaf, not one a number: on a light problem those waits were
    # a tenth of a grading), after one more that asks whether everything is finite (the usual case, then
    # _finite_numbers needs a third of the passes over the output that _numbers makes).
    wide = torch.complex128 if cand.is_complex() else torch.float64
    cand = cand.detach()
    ref = ref.detach().to(cand.device)
    anchor64 = anchor.detach().to(cand.device, wide)
    leaf: dict = {
        "path": path,
        "kind": "float",
        "dtype": dtype_name(cand.dtype),
        "count": cand.numel(),
        "nonfinite": 0,
        "cand_err": 0.0,
        "ref_err": 0.0,
        "anchor_max_abs": 0.0,
        "worst_index": [],
        "cand_value": None,
        "anchor_value": None,
    }
    if cand.numel() == 0:
        return leaf
    if not cand.is_complex() and bool(torch.stack([torch.isfinite(anchor64).all(), torch.isfinite(cand).all()]).all()):
        numbers, values = _finite_numbers(cand, ref, anchor64)
    else:
        numbers, values = _numbers(cand.to(wide), ref.to(wide), anchor64)
    if cand.is_complex():
        numbers_read, values_read = torch.stack(numbers).tolist(), torch.stack(values).tolist()
    else:
        read = torch.stack(numbers + values).tolist()
        numbers_read, values_read = read[:6], read[6:]
    count, ref_error, anchor_max_abs, nan_found, worst_at, worst_diff = numbers_read
    leaf["nonfinite"] = int(count)
    leaf["ref_err"] = ref_error
    leaf["anchor_max_abs"] = anchor_max_abs
    leaf["cand_err"] = math.inf if nan_found or count else worst_diff
    leaf["worst_index"] = _index_tuple(int(worst_at), tuple(cand.shape))
    leaf["cand_value"] = _python_scalar(values_read[0])
    leaf["anchor_value"] = _python_scalar(values_read[1])
    return leaf


def _numbers(cand64: torch.Tensor, ref64: torch.Tensor, anchor64: torch.Tensor) -> tuple[list, list]:
    """A float leaf's numbers on the device, for any values (NaN, infinities, complex): [non-finite count, the
    reference's error, max |anchor|, whether a difference is NaN, the worst element's flat index, its difference] and
    [the candidate's and the anchor's value there]. All three tensors are float64 (complex128) already."""
    finite_anchor = torch.isfinite(anchor64)
    # Where the anchor itself is not finite, the candidate must reproduce it exactly (NaN for NaN, same infinity).
    same = (torch.isnan(anchor64) & torch.isnan(cand64)) | (anchor64 == cand64)
    nonfinite = (~torch.isfinite(cand64) & finite_anchor).sum() + (~finite_anchor & ~same).sum()
    diff = torch.where(finite_anchor, (cand64 - anchor64).abs(), 0.0).reshape(-1)
    ref_err = torch.where(finite_anchor, (ref64 - anchor64).abs(), 0.0).max()
    anchor_max = torch.where(finite_anchor, anchor64.abs(), 0.0).max()
    # The worst element: the first NaN difference when there is one, else the largest difference.
    nan_diff = torch.isnan(diff)
    any_nan = nan_diff.any()
    worst = torch.where(any_nan, nan_diff.to(torch.int32).argmax(), diff.argmax())
    numbers = [nonfinite.to(torch.float64), ref_err, anchor_max, any_nan.to(torch.float64), worst.to(torch.float64),
               diff[worst]]
    return numbers, [cand64.reshape(-1)[worst], anchor64.reshape(-1)[worst]]


def _finite_numbers(cand: torch.Tensor, ref: torch.Tensor, anchor64: torch.Tensor) -> tuple[list, list]:
    """_numbers for a real candidate and anchor with every value finite, in fewer passes and no float64 copy of the
    candidate or the reference: each difference is taken in float64 as the operands are read (type promotion), so
    every number equals _numbers's (tests/grader/test_compare.py holds them side by side). A difference of two finite
    values is never NaN, and no element is non-finite."""
    anchor_flat = anchor64.reshape(-1)
    diff = torch.sub(cand.reshape(-1), anchor_flat).abs_()
    ref_err = torch.sub(ref.reshape(-1), anchor_flat).abs_().max()
    low, high = torch.aminmax(anchor_flat)
    anchor_max = torch.maximum(high, -low)
    worst = diff.argmax()
    zero = torch.zeros((), dtype=torch.float64, device=diff.device)
    numbers = [zero, ref_err, anchor_max, zero, worst.to(torch.float64), diff[worst]]
    return numbers, [cand.reshape(-1)[worst].to(torch.float64), anchor_flat[worst]]


def _exact_leaf(path: str, cand: torch.Tensor, ref: torch.Tensor) -> dict:
    c, r = cand.detach(), ref.detach()
    differs = (c != r).reshape(-1)
    mismatches = int(differs.sum())
    leaf: dict = {"path": path, "kind": "exact", "dtype": dtype_name(cand.dtype), "count": c.numel(),
                  "mismatches": mismatches, "first_index": [], "cand_value": None, "ref_value": None}
    if mismatches:
        first = int(differs.nonzero()[0])
        leaf["first_index"] = _index_tuple(first, tuple(c.shape))
        leaf["cand_value"] = _scalar(c.reshape(-1)[first])
        leaf["ref_value"] = _scalar(r.reshape(-1)[first])
    return leaf


def _quant_leaf(path: str, cand: torch.Tensor, ref: torch.Tensor) -> dict:
    c = cand.detach().to(torch.float64).reshape(-1)
    r = ref.detach().to(torch.float64).reshape(-1)
    metrics = quant_metrics(c, r)
    ref_max_abs = float(r.abs().max()) if r.numel() else 0.0
    return {"path": path, "kind": "quant", "dtype": dtype_name(cand.dtype), "count": c.numel(),
            "ref_max_abs": ref_max_abs, **metrics}


def quant_metrics(cand: Any, ref: Any) -> dict:
    """cosine, relative L1 = Σ|x−ref| / max(Σ|ref|, 1e-12), RMSE; over flat float64 torch tensors."""
    if cand.numel() == 0:
        return {"cosine": 1.0, "relative_l1": 0.0, "rmse": 0.0, "finite": True}
    finite = bool(torch.isfinite(cand).all())
    diff = cand - ref
    norm = float(cand.norm() * ref.norm())
    if norm == 0.0:
        cosine = 1.0 if float(cand.abs().sum()) == float(ref.abs().sum()) == 0.0 else 0.0
    else:
        cosine = float((cand * ref).sum()) / norm
    relative_l1 = float(diff.abs().sum()) / max(float(ref.abs().sum()), 1e-12)
    rmse = math.sqrt(float((diff * diff).mean()))
    return {"cosine": cosine, "relative_l1": relative_l1, "rmse": rmse, "finite": finite}


def _structure(path: str, note: str) -> dict:
    return {"path": path, "kind": "structure", "note": note}


def _describe_type(value: Any) -> str:
    if isinstance(value, torch.Tensor):
        return "a tensor"
    return f"a {type(value).__name__}"


def compare_outputs(cand: Any, ref: Any, anchor: Any, quantized: bool = False, path: str = "output") -> list[dict]:
    """Walks the reference's structure and returns one raw report per leaf (or a structure report and stops)."""
    if isinstance(ref, (list, tuple)):
        if type(cand) is not type(ref):
            return [_structure(path, f"is {_describe_type(cand)} but the reference returns a {type(ref).__name__}")]
        if len(cand) != len(ref):
            return [_structure(path, f"has {len(cand)} elements but the reference has {len(ref)}")]
        leaves: list[dict] = []
        for i, (c, r, a) in enumerate(zip(cand, ref, anchor)):
            leaves.extend(compare_outputs(c, r, a, quantized, f"{path}[{i}]"))
            if leaves and leaves[-1]["kind"] == "structure":
                break
        return leaves
    if isinstance(ref, dict):
        if not isinstance(cand, dict):
            return [_structure(path, f"is {_describe_type(cand)} but the reference returns a dict")]
        if set(cand) != set(ref):
            return [_structure(path, f"has keys {sorted(map(str, cand))} but the reference has {sorted(map(str, ref))}")]
        leaves = []
        for key in ref:
            leaves.extend(compare_outputs(cand[key], ref[key], anchor[key], quantized, f"{path}[{key!r}]"))
            if leaves and leaves[-1]["kind"] == "structure":
                break
        return leaves
    if isinstance(ref, torch.Tensor):
        if not isinstance(cand, torch.Tensor):
            return [_structure(path, f"is {_describe_type(cand)} but the reference returns a tensor")]
        if tuple(cand.shape) != tuple(ref.shape):
            return [_structure(path, f"has shape {list(cand.shape)} but the reference has shape {list(ref.shape)}")]
        if cand.dtype != ref.dtype:
            return [_structure(path, f"has dtype {dtype_name(cand.dtype)} but the reference has "
                                     f"{dtype_name(ref.dtype)}")]
        if cand.device != ref.device:
            return [_structure(path, f"is on device {cand.device} but the reference is on {ref.device}")]
        if quantized:
            return [_quant_leaf(path, cand, ref)]
        if is_floating(ref):
            anchor_tensor = anchor if isinstance(anchor, torch.Tensor) else _as_tensor(anchor)
            return [_float_leaf(path, cand, ref, anchor_tensor)]
        return [_exact_leaf(path, cand, ref)]
    if isinstance(ref, (bool, int, float)) or ref is None:
        if type(cand) is not type(ref):
            return [_structure(path, f"is {_describe_type(cand)} but the reference returns {_describe_type(ref)}")]
        if ref is None:
            return []
        if isinstance(ref, float):
            return [_float_leaf(path, _as_tensor(cand), _as_tensor(ref), _as_tensor(anchor))]
        return [_exact_leaf(path, _as_tensor(cand), _as_tensor(ref))]
    return [_structure(path, f"the reference returns an unsupported {type(ref).__name__}; the problem needs fixing")]
