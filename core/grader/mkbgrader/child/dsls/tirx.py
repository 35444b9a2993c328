"""Adapter for TIRx (Apache TVM's TIR with the x extensions): launches are calls of modules from tvm.compile/build."""

from __future__ import annotations

from typing import Any, Optional

from mkbgrader.child.dsls import Adapter


class _CountedModule:
    def __init__(self, module: Any, guard: Any) -> None:
        self._module, self._guard = module, guard

    def __call__(self, *args: Any) -> Any:
        return self._guard.launch(list(args), lambda: self._module(*args))

    def __getitem__(self, name: str) -> Any:
        function = self._module[name]
        return lambda *args: self._guard.launch(list(args), lambda: function(*args))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._module, name)


class TirxAdapter(Adapter):
    name = "tirx"
    install_hint = "pip install apache-tvm (a build with TIRx)"

    def prepare(self) -> Optional[str]:
        try:
            import tvm
        except ImportError as error:
            return self.missing("tvm", error)
        self.tvm = tvm
        return None

    def observe(self, guard: Any) -> list[tuple[Any, str]]:
        watched = []
        for name in ("compile", "build"):
            original = getattr(self.tvm, name, None)
            if original is None:
                continue

            def wrapper(*args: Any, _original: Any = original, **kwargs: Any) -> Any:
                return _CountedModule(_original(*args, **kwargs), guard)

            setattr(self.tvm, name, wrapper)
            watched.append((self.tvm, name))
        return watched


def make(descriptor: dict) -> Adapter:
    return TirxAdapter(descriptor)
