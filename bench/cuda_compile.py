"""Compile time of a CUDA C++ kernel through mkb_cuda (NVRTC → cubin) against torch.utils.cpp_extension.load_inline
on the same kernel source, cold each time (fresh caches), in one run. GPU host; prints a ratio.

    python3 bench/cuda_compile.py [--kernel FILE (a kernel.py with SOURCE and one kernel)] [--repeats 3]

load_inline needs a host launcher, which is added as a few lines of C++; everything else is the same source.
Both results are launched once and checked against each other, so neither side times a broken build.
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import statistics
import sys
import tempfile
import time

REPO = os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(REPO, "core", "grader"))
DEFAULT_KERNEL = os.path.join(REPO, "tests", "hostile", "good", "good_cuda.py")

LAUNCHER = r"""
#include <torch/extension.h>
void launch_{name}(torch::Tensor a, torch::Tensor b, torch::Tensor out) {{
    long long n = out.numel();
    {name}<<<(unsigned)((n + 255) / 256), 256>>>((const unsigned short*)a.data_ptr(),
        (const unsigned short*)b.data_ptr(), (unsigned short*)out.data_ptr(), n);
}}
"""


def kernel_source(path: str) -> tuple[str, str]:
    tree = ast.parse(open(path, encoding="utf-8").read())
    source = next(node.value.value for node in tree.body if isinstance(node, ast.Assign)
                  and any(getattr(t, "id", "") == "SOURCE" for t in node.targets))
    name = re.search(r'extern\s+"C"\s+__global__\s+void\s+(\w+)', source).group(1)
    return source, name


def time_mkb_cuda(source: str, name: str, salt: int) -> tuple[float, object]:
    import mkb_cuda

    with tempfile.TemporaryDirectory() as cache:
        os.environ["MKB_CUDA_CACHE"] = cache
        started = time.perf_counter()
        kernel = mkb_cuda.compile(source + f"\n// cold build {salt}\n", name)
        return time.perf_counter() - started, kernel


def time_load_inline(source: str, name: str, salt: int) -> tuple[float, object]:
    from torch.utils.cpp_extension import load_inline

    with tempfile.TemporaryDirectory() as build:
        started = time.perf_counter()
        module = load_inline(name=f"mkb_bench_{name}_{salt}_{os.getpid()}",
                             cpp_sources=f"void launch_{name}(torch::Tensor a, torch::Tensor b, torch::Tensor out);",
                             cuda_sources=source + LAUNCHER.format(name=name), functions=[f"launch_{name}"],
                             build_directory=build, extra_cuda_cflags=["-O3"], verbose=False)
        return time.perf_counter() - started, module


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kernel", default=DEFAULT_KERNEL)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    import torch

    source, name = kernel_source(args.kernel)
    nvrtc, inline = [], []
    nvrtc_kernel = inline_module = None
    for salt in range(args.repeats):
        seconds, nvrtc_kernel = time_mkb_cuda(source, name, salt)
        nvrtc.append(seconds)
    for salt in range(args.repeats):
        try:
            seconds, inline_module = time_load_inline(source, name, salt)
        except Exception as error:  # no ninja or no host compiler: say so, keep the NVRTC figures
            print(f"load_inline could not build here: {type(error).__name__}: {str(error)[:300]}")
            break
        inline.append(seconds)
    a = torch.randn(1 << 20, device="cuda").to(torch.bfloat16)
    b = torch.randn(1 << 20, device="cuda").to(torch.bfloat16)
    out_nvrtc, out_inline = torch.empty_like(a), torch.empty_like(a)
    nvrtc_kernel(((a.numel() + 255) // 256, 1, 1), (256, 1, 1), [a, b, out_nvrtc, a.numel()])
    print(f"kernel {name} from {os.path.relpath(args.kernel, REPO)}, {len(source)} bytes of CUDA C++")
    print(f"mkb_cuda (NVRTC, cold cache) : median {statistics.median(nvrtc):7.2f} s  runs {[round(s, 2) for s in nvrtc]}")
    if inline:
        getattr(inline_module, f"launch_{name}")(a, b, out_inline)
        torch.cuda.synchronize()
        same = torch.equal(out_nvrtc, out_inline)
        print(f"load_inline (cold build dir) : median {statistics.median(inline):7.2f} s  runs "
              f"{[round(s, 2) for s in inline]}")
        print(f"outputs identical: {same}")
        print(f"ratio load_inline / mkb_cuda : {statistics.median(inline) / statistics.median(nvrtc):.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
