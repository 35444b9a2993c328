"""CPU check of the 45_kv_transfer_pack_hnd Pallas candidate (run with /usr/bin/python3; torch on the CPU, no JAX):
the candidate's own code (solve, jit body, block specs, kernel) through ../pallas_standin.py on shrunken draws of the
problem (3 sequences of up to 64 tokens, 64 pages), against the problem's reference. The kernel only copies, so the
two must be equal bit for bit; the stand-in fills the send buffer with NaN first, so a row the kernel skipped or a
row past the total that solve returned would show. The shipped solution goes through the same stand-in as a control.
This proves the indexing and the masking of the programs past the total, not the Pallas lowering or any timing."""

import importlib.util
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.dirname(HERE))  # bench/candidates, for pallas_standin.py
import pallas_standin as standin  # noqa: E402


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> int:
    standin.install()
    problem = load(os.path.join(REPO, "problems/kv_cache/45_kv_transfer_pack_hnd.py"), "problem45")
    problem.BATCH, problem.MAX_CONTEXT, problem.NUM_PAGES = 3, 64, 64
    solutions = {"shipped": os.path.join(REPO, "problems/kv_cache/_solutions/45_kv_transfer_pack_hnd.pallas.py"),
                 "v1": os.path.join(HERE, "v1.pallas.py")}
    failed = 0
    for name, path in solutions.items():
        module = load(path, f"solution45_{name}")
        for seed in range(4):
            torch.manual_seed(seed)
            inputs = problem.make_inputs("cpu")
            expected = problem.reference(*inputs)
            got = module.solve(*inputs)
            same = tuple(got.shape) == tuple(expected.shape) and torch.equal(got, expected)
            failed += 0 if same else 1
            print(f"{name} draw {seed}: total {int(inputs[3][-1])} rows of capacity "
                  f"{inputs[2].shape[0] * inputs[2].shape[1] * inputs[0].shape[2]}, "
                  f"{'equal to the reference' if same else 'DIFFERS'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
