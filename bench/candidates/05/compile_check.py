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
    a_words, w_words = np.zeros((128, 1024), np.int32), np.zeros((4096, 1024), np.int32)
    a_scales, w_scales = np.zeros((128, 1), np.float32), np.zeros((1, 4096), np.float32)
    out = np.zeros((128, 4096), np.float16)
    check(HERE, "v1", "_gemm", [a_words, w_words, a_scales, w_scales, out])
    check(HERE, "dp4a_ptx", "_gemm", [a_words, w_words, a_scales, w_scales, out])


if __name__ == "__main__":
    main()
