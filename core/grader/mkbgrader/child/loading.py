"""What every child's work starts with: a stage failure with its blame, an error in one line, a module loaded from
a path (the problem, a kernel), and the reference numerics (TF32 off, full-precision reductions)."""

from __future__ import annotations

import importlib.util
import sys
from typing import Any

import torch


class StageFailure(Exception):
    def __init__(self, message: str, infrastructure: bool = False) -> None:
        super().__init__(message)
        self.infrastructure = infrastructure


def one_line(error: BaseException, limit: int = 400) -> str:
    text = str(error).strip().splitlines()
    message = f"{type(error).__name__}: {text[0] if text else ''}".rstrip(": ")
    return message if len(message) <= limit else message[: limit - 3] + "..."


def set_reference_numerics() -> None:
    """TF32 off, no reduced-precision reductions, float32 matmul precision "highest" (only attributes that exist)."""
    matmul = torch.backends.cuda.matmul
    for name in ("allow_tf32", "allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction"):
        try:  # torch.backends.cuda.matmul raises AssertionError (not AttributeError) for unknown names
            setattr(matmul, name, False)
        except (AssertionError, AttributeError):
            pass
    if hasattr(torch.backends.cudnn, "allow_tf32"):
        torch.backends.cudnn.allow_tf32 = False
    if hasattr(torch, "set_float32_matmul_precision"):
        torch.set_float32_matmul_precision("highest")


def load_module(path: str, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
