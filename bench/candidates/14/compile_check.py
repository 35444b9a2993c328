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
    key_words = np.zeros((16, 16, 8, 32))  # float64 words of [pages, page_size, heads, dim] fp16
    block_table, cu_seq_lens = np.zeros((16, 256), np.int32), np.zeros(17, np.int32)
    check(HERE, "v1", "_gather", [key_words, key_words, block_table, cu_seq_lens, np.zeros((2, 32768, 8, 32))])
    check(HERE, "v2", "_gather", [np.zeros(100), key_words, key_words, np.int64(16), np.int64(256), np.int64(2057)])


if __name__ == "__main__":
    main()
