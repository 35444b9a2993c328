#!/usr/bin/env python3
"""Runs the shipped numba solution of attention/39 and candidate v1 in numba's CUDA simulator on a shrunken problem
(4 heads of dim 16, pages of 4 tokens), against a float64 reference. For a host without a GPU; prints each one's
largest error. Torch without float8 (Debian's) is fine: the codes are bytes, and solve's decode table (the cache
dtype's own cast of every byte) becomes byte -> byte value, which the reference below uses too."""

import importlib.util
import os

os.environ["NUMBA_ENABLE_CUDASIM"] = "1"

import torch  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
SOLUTIONS = {
    "shipped": os.path.join(REPO, "problems/attention/_solutions/39_dsa_lightning_indexer_decode.numba.py"),
    "v1": os.path.join(REPO, "bench/candidates/39/v1.numba.py"),
}
BATCH, PAGES, HEADS, DIM, PAGE_SIZE = 2, 3, 4, 16, 4


def load(path: str, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def shrink(solution) -> None:
    """The module's sizes made small, and its kernel given numpy views of the tensors (what the simulator reads)."""
    solution.HEADS = solution.PAGE_SIZE = HEADS
    solution.HEAD_DIM = DIM
    kernel = solution._indexer

    class Host:
        def __getitem__(self, config):
            launch = kernel[config]
            return lambda *args: launch(*[a.numpy() if isinstance(a, torch.Tensor) else a for a in args])

    solution._indexer = Host()


def main() -> None:
    for tag, path in SOLUTIONS.items():
        solution = load(path, tag)
        shrink(solution)
        torch.manual_seed(0)
        q = torch.randn(BATCH, HEADS, DIM, dtype=torch.bfloat16)
        weights = (torch.rand(BATCH, HEADS) - 0.3) * DIM**-0.5
        codes = torch.randint(0, 256, (BATCH * PAGES, PAGE_SIZE, DIM), dtype=torch.uint8)
        scales = 0.005 + 0.02 * torch.rand(BATCH * PAGES, PAGE_SIZE)
        table = torch.randperm(BATCH * PAGES).to(torch.int32).view(BATCH, PAGES)
        lengths = torch.tensor([5, 12], dtype=torch.int32)
        out = solution.solve(q, weights, codes, scales, table, lengths)
        pages = table.long()
        keys = codes[pages].double().reshape(BATCH, PAGES * PAGE_SIZE, DIM)
        scale = scales.double()[pages].reshape(BATCH, PAGES * PAGE_SIZE)
        scores = torch.matmul(q.double(), keys.transpose(1, 2)) * scale.unsqueeze(1)
        reference = (torch.relu(scores) * weights.double().unsqueeze(-1)).sum(1)
        past = torch.arange(PAGES * PAGE_SIZE).unsqueeze(0) >= lengths.long().unsqueeze(1)
        reference = reference.masked_fill(past, float("-inf"))
        finite = torch.isfinite(reference)
        assert torch.equal(finite, torch.isfinite(out)), f"{tag}: -inf where the reference has none, or none where it has"
        error = (out.double()[finite] - reference[finite]).abs().max()
        print(f"{tag}: largest |solution - float64 reference| {float(error):.3g}")


if __name__ == "__main__":
    main()
