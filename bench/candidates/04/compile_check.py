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
    check(HERE, "v1", "_router", [np.zeros(100, np.int64), np.zeros(100, np.int64), np.zeros(100, np.float32)])
    check(HERE, "v2", "_router", [np.zeros((100, 8), np.int64), np.zeros(100, np.float32)])


if __name__ == "__main__":
    main()
