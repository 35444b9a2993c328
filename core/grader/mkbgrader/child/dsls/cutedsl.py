"""Adapter for CuTe DSL (nvidia-cutlass-dsl): launches are calls of functions decorated with cute.jit."""

from __future__ import annotations

import functools
from typing import Any, Optional

from mkbgrader.child.dsls import Adapter


class CuteDslAdapter(Adapter):
    name = "cutedsl"
    install_hint = "pip install nvidia-cutlass-dsl"

    def prepare(self) -> Optional[str]:
        try:
            import cutlass.cute as cute
        except ImportError as error:
            return self.missing("cutlass.cute", error)
        self.cute = cute
        return None

    def observe(self, guard: Any) -> list[tuple[Any, str]]:
        original_jit = self.cute.jit

        def counted(fn: Any) -> Any:
            @functools.wraps(fn)
            def call(*args: Any, **kwargs: Any) -> Any:
                return guard.launch(list(args) + list(kwargs.values()), lambda: fn(*args, **kwargs))
            return call

        def jit(*dargs: Any, **dkwargs: Any) -> Any:
            if len(dargs) == 1 and callable(dargs[0]) and not dkwargs:
                return counted(original_jit(dargs[0]))
            decorator = original_jit(*dargs, **dkwargs)
            return lambda fn: counted(decorator(fn))

        self.cute.jit = jit
        return [(self.cute, "jit")]


def make(descriptor: dict) -> Adapter:
    return CuteDslAdapter(descriptor)
