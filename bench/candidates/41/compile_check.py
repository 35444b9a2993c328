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
    words = np.zeros(100, np.int64)  # q, k and v as flat int64 words of bf16
    block_table, seq_lens, ws = np.zeros(100, np.int32), np.zeros(128, np.int32), np.zeros(100, np.float32)
    for tag in ("v1", "v2"):
        check(HERE, tag, "_decode", [words, words, words, block_table, seq_lens, ws])


if __name__ == "__main__":
    main()
