#!/usr/bin/env python3
"""Runs the shipped numba solution of kv_cache/14 and candidates v1, v2 in numba's CUDA simulator on a shrunken
problem (4 sequences of 37, 16, 0 and 11 tokens, a 16-page pool, 4 pages per block table row; 8 heads of dim 128 as
in the problem, since the kernels' thread layout is tied to them), against the problem's own reference. For a host
without a GPU; prints, per solution, whether both outputs equal the reference bit for bit. The simulator reads numpy
arrays, so each kernel launch gets numpy views of the (CPU) tensors; libdevice.double_as_longlong is stood in by
Python (struct)."""

import importlib.util
import os
import struct
import types

os.environ["NUMBA_ENABLE_CUDASIM"] = "1"

import torch  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
PROBLEM = os.path.join(REPO, "problems/kv_cache/14_paged_kv_gather.py")
SOLUTIONS = {
    "shipped": os.path.join(REPO, "problems/kv_cache/_solutions/14_paged_kv_gather.numba.py"),
    "v1": os.path.join(REPO, "bench/candidates/14/v1.numba.py"),
    "v2": os.path.join(REPO, "bench/candidates/14/v2.numba.py"),
}
LENGTHS = [37, 16, 0, 11]  # with a sequence of none: 21 int32 in v2's head, an odd count
PAGES, PAGE_SIZE, MAX_BLOCKS, HEADS, DIM = 16, 16, 4, 8, 128


def load(path: str, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class GarbageTorch(types.ModuleType):
    """torch as the solution sees it, except that torch.empty fills its tensor with garbage (NaN, or -12345 for
    integers), so a check cannot pass on memory that already held the answer."""

    def __init__(self):
        super().__init__("torch")

    def __getattr__(self, name):
        return getattr(torch, name)

    @staticmethod
    def empty(*args, **kwargs):
        tensor = torch.empty(*args, **kwargs)
        return tensor.fill_(float("nan") if tensor.is_floating_point() else -12345)


def shrink(solution, total: int) -> None:
    """The module's total made small, torch.empty filled with garbage, its kernel given numpy views of the tensors,
    libdevice stood in."""
    solution.torch = GarbageTorch()
    if hasattr(solution, "TOTAL_TOKENS"):
        solution.TOTAL_TOKENS = total
    solution.libdevice = types.SimpleNamespace(
        double_as_longlong=lambda x: struct.unpack("<q", struct.pack("<d", float(x)))[0])
    kernel = solution._gather

    class Host:
        def __getitem__(self, config):
            launch = kernel[config]
            return lambda *args: launch(*[a.numpy() if isinstance(a, torch.Tensor) else a for a in args])

    solution._gather = Host()


def main() -> None:
    problem = load(PROBLEM, "problem14")
    total = sum(LENGTHS)
    problem.TOTAL_TOKENS = total
    torch.manual_seed(0)
    key_cache = torch.randn(PAGES, PAGE_SIZE, HEADS, DIM, dtype=torch.float16)
    value_cache = torch.randn(PAGES, PAGE_SIZE, HEADS, DIM, dtype=torch.float16)
    block_table = torch.randperm(PAGES)[:len(LENGTHS) * MAX_BLOCKS].view(len(LENGTHS), MAX_BLOCKS).to(torch.int32)
    cu_seq_lens = torch.tensor([0] + LENGTHS).cumsum(0).to(torch.int32)
    inputs = [key_cache, value_cache, block_table, cu_seq_lens]
    before = [t.clone() for t in inputs]
    expected = problem.reference(*inputs)
    for tag, path in SOLUTIONS.items():
        solution = load(path, tag)
        shrink(solution, total)
        keys, values = solution.solve(*inputs)
        same = [torch.equal(got, want) for got, want in zip((keys, values), expected)]
        untouched = all(torch.equal(t, b) for t, b in zip(inputs, before))
        print(f"{tag}: keys equal {same[0]}, values equal {same[1]}, shapes {tuple(keys.shape)} "
              f"{tuple(values.shape)}, inputs unchanged {untouched}")


if __name__ == "__main__":
    main()
