"""DSL adapters: import the DSL lazily, say clearly when it is missing, and observe its kernel launches."""

from __future__ import annotations

import importlib
import re
from typing import Any, Optional


class Adapter:
    """Base adapter. `prepare` imports the DSL (None or a one-line 'not installed' message);
    `observe` hooks the DSL's launch path so every launch goes through guard.launch(args, run)."""

    name = "base"
    install_hint = ""
    # Whether the DSL launches on a stream of its own, unordered with torch's current stream (delay.DeviceDelay).
    own_stream = False

    def __init__(self, descriptor: dict) -> None:
        self.descriptor = descriptor or {}
        hint = self.descriptor.get("install_hint")
        if isinstance(hint, str) and hint:
            self.install_hint = hint

    def missing(self, module: str, error: BaseException) -> str:
        hint = self.install_hint or f"pip install {module}"
        return f"{self.name} is not installed ({module} failed to import: {type(error).__name__}): {hint}"

    def prepare(self) -> Optional[str]:
        return None

    def observe(self, guard: Any) -> list[tuple[Any, str]]:
        """Installs launch hooks; returns (owner, attribute) pairs the tampering check must watch."""
        return []


def wrap_method(owner: Any, name: str, make: Any) -> tuple[Any, str]:
    original = getattr(owner, name)
    setattr(owner, name, make(original))
    return owner, name


def adapter_for(dsl: str, descriptor: dict) -> Adapter:
    adapter_name = ((descriptor or {}).get("compliance") or {}).get("adapter") or dsl
    if not isinstance(adapter_name, str) or not re.fullmatch(r"[a-z][a-z0-9_]*", adapter_name):
        raise ValueError(f"DSL descriptor for '{dsl}' names no valid compliance.adapter")
    try:
        module = importlib.import_module(f"mkbgrader.child.dsls.{adapter_name}")
    except ImportError:
        raise ValueError(f"no grader adapter named '{adapter_name}' for DSL '{dsl}' "
                         "(known: triton, cuda, cutedsl, tirx, numba, pallas, cpusim)") from None
    return module.make(descriptor)
