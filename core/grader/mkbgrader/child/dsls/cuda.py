"""Adapter for CUDA C++ compiled at run time through mkb_cuda (NVRTC): launches are mkb_cuda.Kernel calls."""

from __future__ import annotations

from typing import Any, Optional

from mkbgrader.child.dsls import Adapter, wrap_method


class CudaAdapter(Adapter):
    name = "cuda"
    install_hint = "pip install cupy-cuda12x (or cuda-python)"

    def prepare(self) -> Optional[str]:
        import mkb_cuda

        self.module = mkb_cuda
        problem = mkb_cuda.backend_problem()
        if problem:
            return f"cuda is not usable: {problem}: {self.install_hint}"
        return None

    def observe(self, guard: Any) -> list[tuple[Any, str]]:
        def make(original: Any) -> Any:
            def launch(kernel: Any, grid: Any, block: Any, args: Any, *rest: Any, **kwargs: Any) -> Any:
                return guard.launch(list(args), lambda: original(kernel, grid, block, args, *rest, **kwargs))
            return launch

        return [wrap_method(self.module.Kernel, "__call__", make)]


def make(descriptor: dict) -> Adapter:
    return CudaAdapter(descriptor)
