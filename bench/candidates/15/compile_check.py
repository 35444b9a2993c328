#!/usr/bin/env python3
"""Compiles this folder's numba candidates for sm_90 without a GPU (../numba_compile_check.py says what it needs).
Usage: CUDA_HOME=... NUMBA_FORCE_CUDA_CC=9.0 python3 compile_check.py [ptxas]"""

import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # bench/candidates, for numba_compile_check.py
from numba_compile_check import check  # noqa: E402


def main() -> None:
    latent, cos_sin = np.zeros((4096, 288), np.int32), np.zeros((16384, 64), np.float32)
    cache, index = np.zeros((1024, 64, 288), np.int32), np.zeros(4096, np.int64)
    check(HERE, "v1", "_write", [latent, np.zeros(256, np.int32), index, cos_sin, cache, index])
    check(HERE, "v2", "_write", [latent, np.zeros(16640, np.int32), cos_sin, cache])


if __name__ == "__main__":
    main()
