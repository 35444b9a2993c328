"""Adapter for Triton: launches are observed by wrapping JITFunction.run (the path behind kernel[grid](...))."""

from __future__ import annotations

from typing import Any, Optional

from mkbgrader.child.dsls import Adapter, wrap_method


class TritonAdapter(Adapter):
    name = "triton"
    install_hint = "pip install triton"

    def prepare(self) -> Optional[str]:
        try:
            import triton  # noqa: F401
            from triton.runtime import jit
        except ImportError as error:
            return self.missing("triton", error)
        self.jit = jit
        return None

    def observe(self, guard: Any) -> list[tuple[Any, str]]:
        def make(original: Any) -> Any:
            def run(fn: Any, *args: Any, **kwargs: Any) -> Any:
                if kwargs.get("warmup", False):
                    return original(fn, *args, **kwargs)
                return guard.launch(list(args) + list(kwargs.values()), lambda: original(fn, *args, **kwargs))
            return run

        return [wrap_method(self.jit.JITFunction, "run", make)]


def make(descriptor: dict) -> Adapter:
    return TritonAdapter(descriptor)
