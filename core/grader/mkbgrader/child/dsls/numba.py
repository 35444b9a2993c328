"""Adapter for numba-cuda (SIMT kernels in Python): launches are CUDADispatcher.call, behind kernel[grid, block](...).

Compatibility step, done here in the grader child before numba is imported: numpy 2.x removed the alias
`numpy.row_stack` (an old name of `numpy.vstack`), and the numba-cuda on our GPU image still calls it when a kernel is
launched. Where numpy lacks it, `numpy.row_stack` is set to `numpy.vstack` (the same function under its old name); no
package is changed. Kernel arguments that are numba device arrays are seen as torch views of the same memory, so the
output-dependence probe watches what they wrote. A candidate's own `copy_to_host` is refused under both boundaries
(rule host_compute): it moves problem data to the host, where numpy math would be invisible to the boundary's checks
and could be routed back through a numba copy kernel; a numba solution has no other reason to call it.
"""

from __future__ import annotations

from typing import Any, Optional

import torch

from mkbgrader.child.dsls import Adapter, wrap_method


def numpy_compatibility() -> list[str]:
    """Restores the numpy aliases numba-cuda still uses; returns the names it set (empty where none was missing)."""
    try:
        import numpy
    except ImportError:
        return []
    restored = []
    if not hasattr(numpy, "row_stack") and hasattr(numpy, "vstack"):
        numpy.row_stack = numpy.vstack
        restored.append("row_stack")
    return restored


def _as_torch(value: Any) -> Any:
    """A numba device array as a torch view of the same device memory; anything else unchanged."""
    if hasattr(value, "copy_to_host") and hasattr(value, "__cuda_array_interface__"):
        try:
            return torch.as_tensor(value, device="cuda")
        except Exception:  # not viewable (a zero-size or unusual array): the probe simply does not watch it
            return value
    return value


class NumbaAdapter(Adapter):
    name = "numba"
    install_hint = "pip install numba-cuda"

    def prepare(self) -> Optional[str]:
        self.restored = numpy_compatibility()
        try:
            from numba import cuda  # noqa: F401
            from numba.cuda import dispatcher
        except ImportError as error:
            return self.missing("numba.cuda", error)
        except AttributeError as error:  # a numpy alias this numba still needs and the shim does not restore
            return f"numba is not usable with this numpy ({type(error).__name__}: {error}): {self.install_hint}"
        self.dispatcher = dispatcher
        return None

    def observe(self, guard: Any) -> list[tuple[Any, str]]:
        watched = []
        owner = getattr(self.dispatcher, "CUDADispatcher", None)
        if owner is not None and hasattr(owner, "call"):
            def make(original: Any) -> Any:
                def call(kernel: Any, args: Any, *rest: Any, **kwargs: Any) -> Any:
                    seen = [_as_torch(a) for a in args]
                    return guard.launch(seen, lambda: original(kernel, args, *rest, **kwargs))
                return call

            watched.append(wrap_method(owner, "call", make))
        else:  # another numba-cuda layout: the launch configuration's call is the way in
            config = getattr(self.dispatcher, "_LaunchConfiguration")

            def make_config(original: Any) -> Any:
                def call(launch: Any, *args: Any) -> Any:
                    return guard.launch([_as_torch(a) for a in args], lambda: original(launch, *args))
                return call

            watched.append(wrap_method(config, "__call__", make_config))
        watched.extend(self._refuse_host_math(guard))
        return watched

    def _refuse_host_math(self, guard: Any) -> list[tuple[Any, str]]:
        """copy_to_host called by the candidate is a host_compute violation."""
        try:
            from numba.cuda.cudadrv import devicearray
        except ImportError:
            return []
        owner = getattr(devicearray, "DeviceNDArrayBase", None) or getattr(devicearray, "DeviceNDArray", None)
        if owner is None or not hasattr(owner, "copy_to_host"):
            return []

        def make(original: Any) -> Any:
            def copy_to_host(array: Any, *args: Any, **kwargs: Any) -> Any:
                if guard.from_candidate_call():
                    raise guard.violate("host_compute", "the kernel called numba's copy_to_host: problem data moved "
                                        "to the host for host-side math; compute in numba kernels on the GPU")
                return original(array, *args, **kwargs)
            return copy_to_host

        return [wrap_method(owner, "copy_to_host", make)]


def make(descriptor: dict) -> Adapter:
    return NumbaAdapter(descriptor)
