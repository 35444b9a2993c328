"""mkb_cuda: CUDA C++ kernels written inside kernel.py, compiled at run time with NVRTC and launched on torch's stream.

A candidate writes:

    import torch, mkb_cuda
    SOURCE = r'''
    extern "C" __global__ void scale(const float* x, float* out, float factor, long long n) { ... }
    '''
    _kernel = mkb_cuda.compile(SOURCE, "scale")            # options=("-O3",) optional; cached on disk
    def solve(x):
        out = torch.empty_like(x)
        _kernel((blocks, 1, 1), (256, 1, 1), [x, out, 2.0, x.numel()])   # grid, block, args[, shared_mem=0]
        return out

Arguments: a torch CUDA tensor passes its data pointer; Python ints and floats take the C type declared for that
parameter in the kernel's signature (int/unsigned → 32 bits, long long/int64_t/size_t → 64 bits, float → 32,
double → 64). If the signature cannot be read, ints pass as int32 and floats as float32; wrap them with
mkb_cuda.int64(v) / mkb_cuda.float64(v) to force the width. The kernel must be `extern "C"` (no name mangling).
Compiling goes through cupy's NVRTC bindings to a cubin, cached by content under ~/.cache/mkb/cuda/<sha256>.cubin
(override with MKB_CUDA_CACHE); the launch runs on torch.cuda.current_stream().
"""

from __future__ import annotations

import hashlib
import os
import re
from typing import Any, Optional, Sequence

__all__ = ["compile", "Kernel", "int32", "int64", "float32", "float64", "backend_problem"]


class _Typed:
    def __init__(self, value: Any, kind: str) -> None:
        self.value, self.kind = value, kind


def int32(value: int) -> _Typed:
    return _Typed(int(value), "i32")


def int64(value: int) -> _Typed:
    return _Typed(int(value), "i64")


def float32(value: float) -> _Typed:
    return _Typed(float(value), "f32")


def float64(value: float) -> _Typed:
    return _Typed(float(value), "f64")


def backend_problem() -> str:
    """Empty when kernels can be compiled and launched here; otherwise what is missing."""
    try:
        import cupy  # noqa: F401
    except ImportError as error:
        return f"cupy failed to import ({type(error).__name__})"
    return ""


_SCALAR_KINDS = [
    (re.compile(r"\b(unsigned\s+)?long\s+long\b|\b(u?int64_t|size_t|ptrdiff_t|intptr_t|uintptr_t)\b"), "i64"),
    (re.compile(r"\bdouble\b"), "f64"),
    (re.compile(r"\bfloat\b"), "f32"),
    (re.compile(r"\b(unsigned|int|u?int32_t|long)\b"), "i32"),
]


def parameter_kinds(source: str, name: str) -> Optional[list[str]]:
    """The kinds ("ptr", "i32", "i64", "f32", "f64", "?") of the named kernel's parameters, or None."""
    text = re.sub(r"//[^\n]*|/\*.*?\*/", " ", source, flags=re.S)
    match = re.search(r"__global__\s+void\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?" + re.escape(name) + r"\s*\(",
                      text)
    if not match:
        return None
    depth, end = 1, match.end()
    while end < len(text) and depth:
        depth += {"(": 1, ")": -1}.get(text[end], 0)
        end += 1
    params = text[match.end(): end - 1].strip()
    if not params or params == "void":
        return []
    kinds = []
    for param in params.split(","):
        if "*" in param or "[" in param:
            kinds.append("ptr")
            continue
        kinds.append(next((kind for pattern, kind in _SCALAR_KINDS if pattern.search(param)), "?"))
    return kinds


def _cache_dir() -> str:
    return os.environ.get("MKB_CUDA_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "mkb", "cuda")


def _arch() -> str:
    import torch

    major, minor = torch.cuda.get_device_capability()
    return f"sm_{major}{minor}"


def cuda_include_dirs() -> list[str]:
    """Folders holding the CUDA headers (<cuda_fp16.h>, <cuda_bf16.h>, <cuda_fp8.h>) for NVRTC's -I options:
    $CUDA_HOME/$CUDA_PATH, /usr/local/cuda, then the headers pip's nvidia-* wheels ship."""
    candidates = [os.path.join(os.environ[v], "include") for v in ("CUDA_HOME", "CUDA_PATH") if os.environ.get(v)]
    candidates.append("/usr/local/cuda/include")
    try:
        import nvidia  # type: ignore  # the namespace package of the nvidia-* wheels

        for root in getattr(nvidia, "__path__", []):
            for sub in ("cu13/include", "cuda_runtime/include", "cuda_nvrtc/include"):
                candidates.append(os.path.join(root, sub))
    except ImportError:
        pass
    found: list[str] = []
    for folder in candidates:
        if os.path.isfile(os.path.join(folder, "cuda_fp16.h")) and folder not in found:
            found.append(folder)
    return found[:1]  # one toolkit's headers; mixing versions breaks them


def _compile_cubin(source: str, name: str, options: Sequence[str]) -> Optional[bytes]:
    """NVRTC → cubin through cupy's bindings; None when those bindings are unavailable."""
    try:
        from cupy_backends.cuda.libs import nvrtc  # type: ignore
    except ImportError:
        return None
    if not hasattr(nvrtc, "getCUBIN"):
        return None
    program = nvrtc.createProgram(source, f"{name}.cu", [], [])
    try:
        try:
            nvrtc.compileProgram(program, list(options))
        except Exception as error:
            log = ""
            try:
                log = nvrtc.getProgramLog(program)
            except Exception:
                pass
            raise RuntimeError(f"NVRTC failed to compile {name}: {(log or str(error)).strip()[:2000]}") from None
        return nvrtc.getCUBIN(program)
    finally:
        nvrtc.destroyProgram(program)


class Kernel:
    """A compiled kernel; call it as kernel(grid, block, args, shared_mem=0)."""

    def __init__(self, function: Any, name: str, kinds: Optional[list[str]]) -> None:
        self._function = function
        self.name = name
        self._kinds = kinds

    def _convert(self, args: Sequence[Any]) -> list[Any]:
        import numpy
        import torch

        if self._kinds is not None and len(self._kinds) != len(args):
            raise TypeError(f"kernel {self.name} takes {len(self._kinds)} parameters but got {len(args)} arguments")
        converted = []
        for index, arg in enumerate(args):
            kind = self._kinds[index] if self._kinds is not None else "?"
            if isinstance(arg, _Typed):
                kind, arg = arg.kind, arg.value
            if isinstance(arg, torch.Tensor):
                if not arg.is_cuda:
                    raise TypeError(f"argument {index} of {self.name} is a CPU tensor; pass CUDA tensors")
                converted.append(numpy.uint64(arg.data_ptr()))
            elif isinstance(arg, bool) or isinstance(arg, int):
                converted.append(numpy.int64(arg) if kind == "i64" else numpy.int32(arg))
            elif isinstance(arg, float):
                converted.append(numpy.float64(arg) if kind == "f64" else numpy.float32(arg))
            else:
                raise TypeError(f"argument {index} of {self.name} is a {type(arg).__name__}; pass tensors, ints, "
                                "floats or mkb_cuda.int64/float64 values")
        return converted

    def __call__(self, grid: Sequence[int], block: Sequence[int], args: Sequence[Any], shared_mem: int = 0) -> None:
        import cupy
        import torch

        grid = tuple(int(g) for g in grid) + (1,) * (3 - len(grid))
        block = tuple(int(b) for b in block) + (1,) * (3 - len(block))
        handle = torch.cuda.current_stream().cuda_stream
        stream = _streams.get(handle)
        if stream is None:
            stream = _streams[handle] = cupy.cuda.ExternalStream(handle)
        with stream:  # cupy launches on its current stream
            self._function(grid, block, tuple(self._convert(args)), shared_mem=int(shared_mem))


_loaded: dict[str, Kernel] = {}
_streams: dict[int, Any] = {}


def compile(source: str, name: str, options: Sequence[str] = ()) -> Kernel:  # noqa: A001 (the documented name)
    """Compiles `source` with NVRTC (or loads it from the content-addressed cache) and returns kernel `name`."""
    import cupy

    arch = _arch()
    includes = () if any(o.startswith("-I") or o.startswith("--include-path") for o in options) else tuple(
        f"-I{folder}" for folder in cuda_include_dirs())
    all_options = tuple(options) + includes + (f"--gpu-architecture={arch}", "-default-device", "-std=c++17")
    key = hashlib.sha256("\0".join([source, name, arch, *all_options, cupy.__version__]).encode()).hexdigest()
    if key in _loaded:
        return _loaded[key]
    kinds = parameter_kinds(source, name)
    path = os.path.join(_cache_dir(), key + ".cubin")
    module = None
    if os.path.isfile(path):
        module = cupy.RawModule(path=path)
    else:
        cubin = None
        try:
            cubin = _compile_cubin(source, name, all_options)
        except RuntimeError:
            raise
        except Exception:
            cubin = None
        if cubin is not None:
            os.makedirs(_cache_dir(), exist_ok=True)
            temporary = f"{path}.{os.getpid()}.tmp"
            with open(temporary, "wb") as handle:
                handle.write(cubin)
            os.replace(temporary, path)
            module = cupy.RawModule(path=path)
        else:  # cupy compiles (with its own cache) when its raw NVRTC bindings are not usable
            module = cupy.RawModule(code=source, options=tuple(options) + includes, backend="nvrtc")
    kernel = Kernel(module.get_function(name), name, kinds)
    _loaded[key] = kernel
    return kernel
