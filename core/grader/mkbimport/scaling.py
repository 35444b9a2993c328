"""Scaling a harness's toy sizes to real ones: dim 0 of the drawn tensors grows until the inputs hold about
128 MiB, where that dimension is provably free (it appears nowhere else in the draw or the call)."""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass

from mkbimport.draft import Draft
from mkbimport.literals import DTYPE_BYTES, NOTHING, Dtype, fold

TARGET_BYTES = 128 * 2**20
# Decompositions cost far more than their bytes suggest; their batches grow to 8 MiB only.
DECOMPOSITION_TARGET_BYTES = 8 * 2**20
DECOMPOSITIONS = ("svd", "svdvals", "qr", "cholesky", "lu", "ldl", "eig", "eigh", "eigvals", "eigvalsh", "solve", "inv",
                  "inverse", "det", "slogdet", "pinv", "lstsq", "matrix_exp")
# Calls that tie one tensor's dim 0 to another's inner dimension, so equal shapes do not mean "elementwise".
CONTRACTIONS = DECOMPOSITIONS + ("matmul", "mm", "bmm", "mv", "addmm", "baddbmm", "addbmm", "addmv", "linear",
                                 "einsum", "tensordot", "conv", "outer", "kron", "cdist", "dot", "inner", "cross")
CREATORS = {"randn", "rand", "randint", "zeros", "ones", "empty", "full"}
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


def scale_draft(draft: Draft, called: set[str], matmul_operator: bool) -> Scaling:
    """Rewrites the draft's dim-0 sizes in place and says what it did."""
    creations = [c for c in _creations(draft) if c.numel > 0]
    random_numel = sum(c.numel for c in creations if c.random)
    total = sum(c.numel * c.itemsize for c in creations)
    if not creations:
        return Scaling(1, "sizes as the harness draws them (no literal shapes to scale)", total, random_numel)
    lead = creations[0].dims[0].value
    leading = [c for c in creations if c.dims[0].value == lead]
    occurrences = sum(1 for s in draft.statements for n in ast.walk(s) if _int_constant(n) and n.value == lead)
    occurrences += sum(1 for n in ast.walk(draft.call) if _int_constant(n) and n.value == lead)
    in_leading_shapes = sum(1 for c in leading for d in c.dims if d.value == lead)
    contracting = _uses_any(called, CONTRACTIONS) or matmul_operator
    free = occurrences == len(leading)
    elementwise = (occurrences == in_leading_shapes and len(leading) == len(creations) and not contracting
                   and len({tuple(d.value for d in c.dims) for c in creations}) == 1)
    if not (free or elementwise):
        return Scaling(1, f"sizes as the harness draws them: its dim 0 ({lead}) also sizes another dimension or "
                          f"argument, so it cannot grow alone", total, random_numel)
    target = DECOMPOSITION_TARGET_BYTES if _uses_any(called, DECOMPOSITIONS) else TARGET_BYTES
    growing = sum(c.numel * c.itemsize for c in leading)
    fixed = total - growing
    factor = max(1, (target - fixed) // growing) if growing else 1
    if factor == 1:
        return Scaling(1, "sizes as the harness draws them (already about the target size)", total, random_numel)
    for creation in leading:
        creation.dims[0].value = lead * factor
    scaled = fixed + growing * factor
    return Scaling(factor, f"dim 0 of the harness's draw scaled by {factor} ({lead} -> {lead * factor}), "
                           f"{scaled / 2**20:.0f} MiB of inputs", scaled, random_numel)
