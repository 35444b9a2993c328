"""The implementation boundary, judged in the evaluation child's probe run: what eager PyTorch may do beside the DSL.

Two named boundaries (DESIGN §5.2), chosen per grading (settings.boundary) and recorded with every verdict:

- `mkb` (the default) is MetaKernelBench's rule. Eager PyTorch may do any part of the work, but the DSL step must
  not be removable: it is, when an eager-produced tensor already passes the correctness check for a returned output,
  up to a copy, a cast or a layout change, before any DSL kernel contributed to it, and that holds for every
  returned output that depends on the DSL kernels. That is an eager result routed through a DSL copy, cast or
  transpose; a DSL kernel that computes part of the result and an eager step that finishes it is allowed.
- `strict` puts all arithmetic in the DSL: any eager aten op outside data movement (allocation, views, copies,
  casts, fills) is a violation whatever its size, and the verdict names the op. The `mkb` rule applies as well.

How it is seen: a TorchDispatchMode over the probe run's solve call (the dependence probe, compliance_runtime).
The guard reports every tensor a DSL launch wrote; their storages are tainted. An eager op's result is tainted when
any tensor it read is, except allocations and fills, whose values read nothing. Each untainted result of an op that
computes or moves values is checked at once against the draw's reference and anchor, for every returned output of
the same element count: as it is, cast to the output's dtype (within floats, within integers), permuted, or
reshaped. Limits, stated honestly: a DSL kernel that writes through raw pointers instead of tensor arguments is not
seen writing, so what eager code computes from its result looks untainted; an eager result that is sliced or padded
before the DSL step is not recognised; ops in threads other than solve's own are not seen; a tensor made only by
moving the inputs' values (copies, casts, views, concatenation) is no eager result, so where the inputs alone pass
a loose check (quantization metrics), that is the problem's weakness and not flagged.
"""

from __future__ import annotations

import itertools
from typing import Any, Callable, Optional

import torch

from mkbgrader.child import compare
from mkbgrader.parent import judging

try:
    from torch.utils._python_dispatch import TorchDispatchMode
except ImportError:  # a torch without dispatch modes: the boundary is not watched
    TorchDispatchMode = None

# Aten ops that allocate, view, copy, cast or fill: the data movement that `strict` allows eager code at any size.
DATA_MOVEMENT_OPS = frozenset("""
empty empty_like empty_strided empty_permuted new_empty new_empty_strided zeros zeros_like new_zeros ones ones_like
new_ones full full_like new_full fill fill_ zero zero_ scalar_tensor lift lift_fresh lift_fresh_copy arange
view view_as _unsafe_view reshape _reshape_alias as_strided t transpose permute expand expand_as squeeze unsqueeze
select slice split split_with_sizes unsafe_split unsafe_split_with_sizes chunk unsafe_chunk narrow unbind diagonal
unfold detach alias flatten unflatten movedim swapaxes numpy_T T mT view_as_real view_as_complex
contiguous clone copy copy_ _copy_from _copy_from_and_resize _to_copy to type_as resize_ set_ cat stack
_local_scalar_dense item is_nonzero sym_size sym_stride sym_numel sym_storage_offset is_same_size record_stream
""".split())

# Ops whose result's values read no tensor: a fresh allocation or a fill is never "computed from" the DSL's output.
VALUE_FREE_OPS = frozenset("""
empty empty_like empty_strided empty_permuted new_empty new_empty_strided zeros zeros_like new_zeros ones ones_like
new_ones full full_like new_full fill fill_ zero zero_ scalar_tensor arange lift_fresh
""".split())

def op_name(func: Any) -> str:
    """An aten op's name without its overload: aten.add.Tensor → add."""
    packet = getattr(func, "overloadpacket", None)
    if packet is not None:
        return str(packet).split(".")[-1]
    return str(getattr(func, "__name__", func)).split(".")[0]


def is_data_movement(name: str) -> bool:
    if name in DATA_MOVEMENT_OPS:
        return True
    if name.endswith("_") and name[:-1] in DATA_MOVEMENT_OPS:  # in-place forms: squeeze_, t_, as_strided_, ...
        return True
    return name.endswith("_copy") and name[: -len("_copy")] in DATA_MOVEMENT_OPS  # view_copy, permute_copy, ...


def _storage_key(tensor: torch.Tensor) -> int:
    try:
        return tensor.untyped_storage().data_ptr()
    except AttributeError:  # torch 1.x
        return tensor.storage().data_ptr()


def _kind(dtype: torch.dtype) -> str:
    if dtype.is_floating_point:
        return "float"
    if dtype.is_complex:
        return "complex"
    if dtype == torch.bool:
        return "bool"
    return "int"


def output_leaves(reference: Any, anchor: Any, path: str = "output") -> list[tuple[str, torch.Tensor, Any]]:
    """(path, reference tensor, anchor) for each tensor leaf, in draws.tensors_in's order and compare's paths."""
    if isinstance(reference, torch.Tensor):
        return [(path, reference, anchor)]
    if isinstance(reference, (list, tuple)) and isinstance(anchor, (list, tuple)):
        return [leaf for i, (r, a) in enumerate(zip(reference, anchor))
                for leaf in output_leaves(r, a, f"{path}[{i}]")]
    if isinstance(reference, dict) and isinstance(anchor, dict):
        return [leaf for key in reference for leaf in output_leaves(reference[key], anchor.get(key), f"{path}[{key!r}]")]
    return []


def _arrangements(candidate: torch.Tensor, shape: tuple) -> list[tuple[torch.Tensor, str]]:
    """The candidate arranged as `shape`: itself, a permutation of its dimensions, or a reshape (same element count)."""
    found: list[tuple[torch.Tensor, str]] = []
    if tuple(candidate.shape) == shape:
        found.append((candidate, ""))
    if candidate.dim() == len(shape) and 2 <= len(shape) <= 4 and sorted(candidate.shape) == sorted(shape):
        for order in itertools.permutations(range(len(shape))):
            if list(order) != sorted(order) and tuple(candidate.shape[i] for i in order) == shape:
                found.append((candidate.permute(order), f"a layout change (permute{tuple(order)})"))
    if tuple(candidate.shape) != shape:
        found.append((candidate.reshape(shape), f"a reshape from {list(candidate.shape)}"))
    return found


class BoundaryRecorder:
    """Watches one probe solve call under a boundary; `violation()` is (rule, detail) or None once solve returned."""

    def __init__(self, boundary: str, in_launch: Callable[[], bool], reference: Any, anchor: Any,
                 quant_thresholds: Optional[dict], dsl: str, foreign: Callable[[], str] = lambda: "") -> None:
        self.boundary = boundary
        self.foreign = foreign  # compute beside the DSL that torch's dispatcher cannot see (JAX, host copies)
        self.in_launch = in_launch
        self.quant_thresholds = quant_thresholds
        self.dsl = dsl
        self.targets = output_leaves(reference, anchor)
        self.tainted: set[int] = set()
        self.input_like: set[int] = set()  # the inputs' storages and what data movement made from them alone
        self.first_compute = ""   # strict: the first eager op outside data movement
        self.prevalid: dict[int, tuple[str, str]] = {}  # target index → (op, how) of the first eager tensor that passed
        self.busy = False

    def inputs_are(self, inputs: Any) -> None:
        self.input_like.update(_storage_key(t) for t in _tensors(inputs) if t.numel())

    # ----- the guard reports what each launch wrote --------------------------------------------------------------
    def launch_wrote(self, tensor: torch.Tensor) -> None:
        if tensor.numel():
            self.tainted.add(_storage_key(tensor))

    # ----- every eager op ----------------------------------------------------------------------------------------
    def saw(self, func: Any, args: Any, kwargs: Any, result: Any) -> None:
        if self.busy or self.in_launch():
            return
        name = op_name(func)
        if self.boundary == "strict" and not self.first_compute and not is_data_movement(name):
            self.first_compute = f"aten.{name}"
        read_keys = {_storage_key(t) for t in _tensors(args) + _tensors(kwargs) if t.numel()}
        # copy_ overwrites its destination: the values it leaves come from the source alone.
        source_keys = {_storage_key(t) for t in _tensors(args[1:]) if t.numel()} if name == "copy_" else read_keys
        value_free = name in VALUE_FREE_OPS
        tainted_input = not value_free and any(k in self.tainted for k in read_keys)
        moved_inputs = is_data_movement(name) and not value_free and bool(source_keys) and \
            source_keys <= self.input_like
        self.busy = True
        try:
            for tensor in _tensors(result):
                if not tensor.numel():
                    continue
                key = _storage_key(tensor)
                if tainted_input:
                    self.tainted.add(key)
                elif key not in read_keys:
                    self.tainted.discard(key)  # a fresh storage: whatever lived at this address before is gone
                if moved_inputs:
                    self.input_like.add(key)
                    continue  # the inputs' own values moved: if they pass, the problem lets them, not the kernel
                self.input_like.discard(key)  # computed values now, or a fresh allocation
                if not value_free and key not in self.tainted:
                    self._check_candidate(name, tensor)
        finally:
            self.busy = False

    def _check_candidate(self, name: str, tensor: torch.Tensor) -> None:
        for index, (_, reference, anchor) in enumerate(self.targets):
            if index in self.prevalid or tensor.numel() != reference.numel() or tensor.device != reference.device:
                continue
            if _kind(tensor.dtype) != _kind(reference.dtype):
                continue
            try:
                found = self._passes_for(tensor, reference, anchor)
            except Exception:  # the check's own float64 copies did not fit: no judgement on this tensor
                found = ""
            if found:
                self.prevalid[index] = (f"aten.{name}", found)

    def _passes_for(self, tensor: torch.Tensor, reference: torch.Tensor, anchor: Any) -> str:
        """How the tensor passes the correctness check for the output ("a copy", "a cast from ...", ...), or ""."""
        cast = tensor if tensor.dtype == reference.dtype else tensor.to(reference.dtype)
        cast_words = "" if cast is tensor else f"a cast from {compare.dtype_name(tensor.dtype)}"
        for arranged, layout_words in _arrangements(cast, tuple(reference.shape)):
            leaves = compare.compare_outputs(arranged, reference, anchor, self.quant_thresholds is not None)
            if leaves and all(judging.leaf_passes(leaf, self.quant_thresholds) for leaf in leaves):
                return " and ".join(w for w in (cast_words, layout_words) if w) or "a copy"
        return ""

    # ----- the judgement -----------------------------------------------------------------------------------------
    def violation(self, depends: list[bool]) -> Optional[tuple[str, str]]:
        """(rule, detail) for the boundary's first broken rule; `depends` says which returned tensors changed when
        the DSL's results were poisoned (compliance_runtime.dependent_leaves)."""
        foreign = self.foreign() if self.boundary == "strict" else ""
        if foreign and not self.first_compute:
            return ("eager_compute", f"solve ran {foreign}; under the strict boundary all arithmetic happens in "
                    f"{self.dsl} kernels (eager code may only allocate, view, copy, cast and fill); move it into a "
                    "kernel or grade with --boundary mkb")
        if self.first_compute:
            return ("eager_compute", f"solve ran eager torch op {self.first_compute} outside a {self.dsl} kernel; "
                    f"under the strict boundary all arithmetic happens in {self.dsl} kernels (eager code may only "
                    "allocate, view, copy, cast and fill); move it into a kernel or grade with --boundary mkb")
        if not self.prevalid or len(depends) != len(self.targets):
            return None
        dependent = [i for i, d in enumerate(depends) if d]
        if not dependent or any(i not in self.prevalid for i in dependent):
            return None  # some output carries a genuine DSL contribution
        index = dependent[0]
        op, how = self.prevalid[index]
        path = self.targets[index][0]
        return ("eager_result_routed", f"eager torch op {op} produced a tensor that already passes the correctness "
                f"check for {path} (up to {how}) before any {self.dsl} kernel contributed to it; the {self.dsl} step "
                "only routes an eager result and could be removed. Let a kernel compute part of the result "
                f"(boundary {self.boundary})")


def _tensors(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _tensors(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _tensors(v)]
    return []


def dispatch_mode(recorder: BoundaryRecorder) -> Any:
    """A TorchDispatchMode feeding every aten op to the recorder, or None where torch has none."""
    if TorchDispatchMode is None:
        return None

    class BoundaryMode(TorchDispatchMode):
        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            result = func(*args, **(kwargs or {}))
            recorder.saw(func, args, kwargs or {}, result)
            return result

    return BoundaryMode()
