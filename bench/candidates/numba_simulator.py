"""What the candidates' simulate.py scripts share: numba's CUDA simulator with warp shuffles (a per-warp barrier and
exchange) and libdevice's bit casts stood in by Python, a torch whose `empty` hands out garbage, and kernel launches
that pass numpy views of CPU tensors (the simulator reads numpy arrays). Import it before numba.cuda is used: it
turns the simulator on. For a host without a GPU; the GPU decides (grade_candidates.py)."""

import importlib.util
import os
import threading
import time
import types

os.environ["NUMBA_ENABLE_CUDASIM"] = "1"

import numpy as np  # noqa: E402
import torch  # noqa: E402
from numba.cuda.simulator import kernelapi  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

_lock = threading.Lock()


def _warp(thread):
    """The (barrier, exchange) of the calling simulator thread's warp."""
    with _lock:
        state = thread._manager.__dict__.setdefault("_warps", {})
        key = (tuple(thread.blockIdx), thread.thread_id >> 5)
        if key not in state:
            state[key] = (threading.Barrier(32), {})
        return state[key]


def _exchange(value, source):
    thread = threading.current_thread()
    barrier, exchange = _warp(thread)
    lane = thread.thread_id & 31
    exchange[lane] = value
    barrier.wait()
    result = exchange[source(lane)]
    barrier.wait()
    return result


def _shfl_xor_sync(self, mask, value, lane_mask):
    return _exchange(value, lambda lane: lane ^ lane_mask)


def _shfl_sync(self, mask, value, src_lane):
    return _exchange(value, lambda lane: src_lane)


kernelapi.FakeCUDAModule.shfl_xor_sync = _shfl_xor_sync
kernelapi.FakeCUDAModule.shfl_sync = _shfl_sync


class Libdevice:
    @staticmethod
    def int_as_float(x):
        return np.array([int(x) & 0xFFFFFFFF], dtype=np.uint32).view(np.float32)[0]

    @staticmethod
    def float_as_int(x):
        return int(np.array([x], dtype=np.float32).view(np.int32)[0])


def load(path: str, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class GarbageTorch(types.ModuleType):
    """torch as the solution sees it, except that torch.empty fills its tensor with garbage (NaN, or -12345)."""

    def __init__(self):
        super().__init__("torch")

    def __getattr__(self, name):
        return getattr(torch, name)

    @staticmethod
    def empty(*args, **kwargs):
        tensor = torch.empty(*args, **kwargs)
        return tensor.fill_(float("nan") if tensor.is_floating_point() else -12345)


class NumpyLaunch:
    """A kernel as a solution launches it (`kernel[config](*args)`), with numpy views of its tensor arguments."""

    def __init__(self, kernel):
        self.kernel = kernel

    def __getitem__(self, config):
        launch = self.kernel[config]
        return lambda *args: launch(*[a.numpy() if isinstance(a, torch.Tensor) else a for a in args])


def simulate(solution, *kernel_names: str) -> None:
    """Readies a loaded solution module for the simulator: each named kernel is launched with numpy views of its
    tensor arguments, libdevice is stood in, and torch.empty hands out garbage."""
    solution.torch = GarbageTorch()
    solution.libdevice = Libdevice
    for name in kernel_names:
        setattr(solution, name, NumpyLaunch(getattr(solution, name)))


def solve_timed(solution, inputs: list, before: list):
    """solution.solve on the inputs: (its outputs, the seconds it took in the simulator, whether the inputs still
    equal `before`, the clones taken before the first solution ran)."""
    began = time.time()
    outputs = solution.solve(*inputs)
    seconds = time.time() - began
    return outputs, seconds, all(torch.equal(t, b) for t, b in zip(inputs, before))


def worst_error(output, anchor) -> float:
    """The largest absolute difference from the float64 anchor; NaN when any difference is not finite."""
    error = (output.double() - anchor).abs()
    return float(error.max()) if bool(torch.isfinite(error).all()) else float("nan")
