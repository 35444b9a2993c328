#!/usr/bin/env python3
"""Compiles the candidates' kernels for sm_90 without a GPU: numba's CUDA target (here Debian's numba 0.56) to PTX
with NVVM, then CUDA's ptxas -v for the register, shared-memory and spill counts. Needs a libNVVM: point CUDA_HOME at
a folder holding nvvm/lib64/libnvvm.so and nvvm/libdevice/libdevice.10.bc (on the writing host, libnvvm.so.4 from
Debian's libnvvm4 11.8 package), and set NUMBA_FORCE_CUDA_CC=9.0 (numba 0.56 asks the CUDA runtime which
architectures it may target, and there is none here). The GPU image's numba-cuda and NVVM are newer, so its counts
may differ. Each candidate folder's compile_check.py calls check() with example arguments of its kernels.
Usage: CUDA_HOME=... NUMBA_FORCE_CUDA_CC=9.0 python3 NN/compile_check.py [ptxas]"""

import importlib.util
import os
import subprocess
import sys
import tempfile

import numba
from numba import cuda

PTXAS = sys.argv[1] if len(sys.argv) > 1 else "/usr/local/cuda/bin/ptxas"


def load(path: str, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def check(folder: str, tag: str, kernel_name: str, examples: list) -> None:
    """Compiles `kernel_name` of folder/TAG.numba.py for the numba types of `examples` and prints ptxas's counts."""
    module = load(os.path.join(folder, f"{tag}.numba.py"), tag)
    kernel = getattr(module, kernel_name)
    signature = tuple(numba.typeof(example) for example in examples)
    ptx, _ = cuda.compile_ptx(kernel.py_func, signature, cc=(9, 0))
    with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as handle:
        handle.write(ptx)
    command = [PTXAS, "-arch=sm_90", "-v", handle.name, "-o", os.devnull]
    cap = kernel.targetoptions.get("max_registers")
    if cap:  # compile_ptx does not apply the kernel's register cap: ptxas does
        command.insert(1, f"--maxrregcount={cap}")
    result = subprocess.run(command, capture_output=True, text=True)
    os.unlink(handle.name)
    report = [line.split("info    : ")[-1].strip() for line in (result.stdout + result.stderr).splitlines()
              if "Used" in line or "spill" in line or "rror" in line]
    print(f"{tag} {kernel_name}: " + "; ".join(report))
