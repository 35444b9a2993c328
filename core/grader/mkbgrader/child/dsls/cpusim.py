"""Adapter for `cpusim`, the CPU test DSL: launches are calls of a cpusim kernel's launcher."""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any, Optional

from mkbgrader.child.dsls import Adapter, wrap_method

# In the source tree the test DSL lives in tests/fixtures/cpusim_lib; MKB_CPUSIM_PATH overrides.
_DEFAULT_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "..",
                             "tests", "fixtures", "cpusim_lib")


class CpusimAdapter(Adapter):
    name = "cpusim"

    def prepare(self) -> Optional[str]:
        path = os.path.realpath(os.environ.get("MKB_CPUSIM_PATH", _DEFAULT_PATH))
        if path not in sys.path:
            sys.path.insert(0, path)
        try:
            self.module = importlib.import_module("cpusim")
        except ImportError as error:
            return self.missing("cpusim", error)
        return None

    def observe(self, guard: Any) -> list[tuple[Any, str]]:
        def make(original: Any) -> Any:
            def launch(launcher: Any, *args: Any) -> Any:
                return guard.launch(args, lambda: original(launcher, *args))
            return launch

        return [wrap_method(self.module.Launcher, "__call__", make)]


def make(descriptor: dict) -> Adapter:
    return CpusimAdapter(descriptor)
