"""Scaling a harness's toy sizes to real ones: a size grows until the inputs hold about 128 MiB, where the draw, the
call and the task's code show that it is free to grow."""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass

from mkbimport.draft import Draft
from mkbimport.literals import DTYPE_BYTES, NOTHING, Dtype, fold

TARGET_BYTES = 128 * 2**20
# Decompositions cost far more than their bytes suggest; their batches grow to 8 MiB only.
DECOMPOSITION_TARGET_BYTES = 8 * 2**20
SQUARE_DECOMPOSITION_TARGET_BYTES = 2**20  # a decomposition of one grown matrix: cubic cost, about 512 x 512 fp32
DECOMPOSITIONS = ("svd", "svdvals", "qr", "cholesky", "lu", "ldl", "eig", "eigh", "eigvals", "eigvalsh", "solve", "inv",
                  "inverse", "det", "slogdet", "pinv", "lstsq", "matrix_exp")
# Calls that tie one tensor's dim 0 to another's inner dimension, so equal shapes do not mean "elementwise".
CONTRACTIONS = DECOMPOSITIONS + ("matmul", "mm", "bmm", "mv", "addmm", "baddbmm", "addbmm", "addmv", "linear",
                                 "einsum", "tensordot", "conv", "outer", "kron", "cdist", "dot", "inner", "cross")
CREATORS = {"randn", "rand", "randint", "zeros", "ones", "empty", "full", "eye"}
RANDOM_CREATORS = {"randn", "rand", "randint"}


@dataclass
class Creation:
    call: ast.Call
    dims: list[ast.Constant]  # the shape's literal sizes
    itemsize: int
    random: bool

    @property
    def numel(self) -> int:
        return math.prod(d.value for d in self.dims)


@dataclass(frozen=True)
class Scaling:
    factor: int  # 1: not scaled
    note: str  # what was done, or why not, in words
    input_bytes: int  # the drawn tensors' bytes after scaling
    random_numel: int  # elements drawn at random before scaling (0: the harness draws nothing random)


def _int_constant(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int


def _creation(call: ast.Call) -> Creation | None:
    func = call.func
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "torch"
            and func.attr in CREATORS):
        return None
    args = call.args[2:] if func.attr == "randint" and len(call.args) >= 3 else call.args
    if func.attr == "randint" and len(call.args) == 2:
        args = call.args[1:]
    if func.attr == "full":
        args = call.args[:1]
    if len(args) == 1 and isinstance(args[0], (ast.Tuple, ast.List)):
        dims = list(args[0].elts)
    else:
        dims = list(args)
    if func.attr == "eye" and len(dims) == 1:
        dims = dims * 2  # eye(n) is n x n: the one literal sizes both dimensions
    if not dims or not all(_int_constant(d) for d in dims):
        return None
    dtype = next((fold(k.value, {}) for k in call.keywords if k.arg == "dtype"), NOTHING)
    default = 8 if func.attr == "randint" else 4
    itemsize = DTYPE_BYTES.get(dtype.name, default) if isinstance(dtype, Dtype) else default
    return Creation(call=call, dims=dims, itemsize=itemsize, random=func.attr in RANDOM_CREATORS)  # type: ignore


def _creations(draft: Draft) -> list[Creation]:
    found = []
    for statement in draft.statements:
        for node in ast.walk(statement):
            if isinstance(node, ast.Call) and (creation := _creation(node)) is not None:
                found.append(creation)
    return found


def _uses_any(called: set[str], words: tuple[str, ...]) -> bool:
    """Whether the task calls one of `words` (torch.linalg.svd, F.conv2d, torch.cholesky_solve)."""
    return any(name == word or name.startswith(word + "_") or (word == "conv" and name.startswith("conv"))
               for name in called for word in words)


def _index_bound(creation: Creation, size: int) -> bool:
    """torch.randint(0, size, shape): indices below `size`, drawn apart from the tensor they index."""
    call = creation.call
    return (isinstance(call.func, ast.Attribute) and call.func.attr == "randint" and len(call.args) >= 3
            and _int_constant(call.args[0]) and call.args[0].value == 0 and _int_constant(call.args[1])
            and call.args[1].value == size and all(d.value != size for d in creation.dims))


def _grow_every_size(creations: list[Creation], size: int, target: int) -> int:
    """The largest factor k for which the inputs, with every dimension equal to `size` grown k-fold, stay within
    `target`, as does a square of the grown size in float64 (the bound on an output that pairs two grown dimensions,
    as a matmul's M x N does, in the grader's float64 anchor)."""
    def input_bytes(k: int) -> int:
        return sum(c.numel * c.itemsize * k ** sum(1 for d in c.dims if d.value == size) for c in creations)

    factor = 1
    while input_bytes(factor + 1) <= target and ((factor + 1) * size) ** 2 * 8 <= target:
        factor += 1
    return factor


def scale_draft(draft: Draft, called: set[str], matmul_operator: bool, section_constants: set[int]) -> Scaling:
    """Rewrites the draft's sizes in place and says what it did. Two ways, the first that applies:
    - dim 0 alone grows when its size appears nowhere else (or every input has the same shape and the task
      contracts nothing), until the inputs hold about 128 MiB;
    - otherwise a size of at least 8 that appears only as tensor dimensions grows in every dimension it sizes
      (the matrices of a solve, both sides of a matmul), within the same bound and a float64 square of it,
      unless the task's own code names that size (it may depend on it)."""
    creations = [c for c in _creations(draft) if c.numel > 0]
    random_numel = sum(c.numel for c in creations if c.random)
    total = sum(c.numel * c.itemsize for c in creations)
    if not creations:
        return Scaling(1, "sizes as the harness draws them (no literal shapes to scale)", total, random_numel)
    lead = creations[0].dims[0].value
    leading = [c for c in creations if c.dims[0].value == lead]
    # An index drawn below dim 0 (torch.randint(0, 64, ...) beside 64 rows) grows with it and stays in range.
    bounds = [c.call.args[1] for c in creations if _index_bound(c, lead)]
    occurrences = sum(1 for s in draft.statements for n in ast.walk(s) if _int_constant(n) and n.value == lead)
    occurrences += sum(1 for n in ast.walk(draft.call) if _int_constant(n) and n.value == lead)
    occurrences -= len(bounds)
    in_shapes = len({id(d) for c in creations for d in c.dims if d.value == lead})
    contracting = _uses_any(called, CONTRACTIONS) or matmul_operator
    decomposing = _uses_any(called, DECOMPOSITIONS)
    named_by_task = lead in section_constants
    free = occurrences == len(leading)
    elementwise = (occurrences == in_shapes and len(leading) == len(creations) and not contracting
                   and len({tuple(d.value for d in c.dims) for c in creations}) == 1)
    if free or elementwise:
        target = DECOMPOSITION_TARGET_BYTES if decomposing else TARGET_BYTES
        growing = sum(c.numel * c.itemsize for c in leading)
        fixed = total - growing
        factor = max(1, (target - fixed) // growing) if growing else 1
        if factor == 1:
            return Scaling(1, "sizes as the harness draws them (already about the target size)", total, random_numel)
        for creation in leading:
            creation.dims[0].value = lead * factor
        for bound in bounds:
            bound.value = lead * factor  # type: ignore[attr-defined]
        scaled = fixed + growing * factor
        indices = f", and the bound of {len(bounds)} index draw(s) with it" if bounds else ""
        return Scaling(factor, f"dim 0 of the harness's draw scaled by {factor} ({lead} -> {lead * factor}){indices}, "
                               f"{scaled / 2**20:.0f} MiB of inputs", scaled, random_numel)
    if lead >= 8 and occurrences == in_shapes and not bounds and not named_by_task:
        target = SQUARE_DECOMPOSITION_TARGET_BYTES if decomposing else TARGET_BYTES
        factor = _grow_every_size(creations, lead, target)
        if factor > 1:
            for creation in creations:
                for dim in creation.dims:
                    if dim.value == lead:
                        dim.value = lead * factor
            scaled = sum(c.numel * c.itemsize for c in creations)
            return Scaling(factor, f"size {lead} grown by {factor} in every dimension it sizes ({lead} -> "
                                   f"{lead * factor}), {scaled / 2**20:.1f} MiB of inputs", scaled, random_numel)
    named = named_by_task and lead >= 8 and occurrences == in_shapes
    reason = "the task's code names it" if named else "it also sizes another dimension or argument"
    return Scaling(1, f"sizes as the harness draws them: its dim 0 ({lead}) cannot grow, since {reason}", total,
                   random_numel)
