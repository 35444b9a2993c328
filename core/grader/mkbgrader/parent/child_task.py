"""The one door from the parent to the child package: a child's work named by module and function of
`mkbgrader.child` (imported and called only in the child process), and what the server process loads before it
forks, so that each child inherits torch and the child package instead of importing them (DESIGN §5.4)."""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from typing import Any

CHILD_PACKAGE = "mkbgrader.child"

# What a long-lived server loads before it says ready: torch._dynamo first (see preload), then the child modules
# that grading, re-timing, pooled draws, validation and warm-up run, then the DSL packages that are installed.
SERVER_PRELOADS = ("mkbgrader.child.evaluate", "mkbgrader.child.retime", "mkbgrader.child.pool",
                   "mkbgrader.child.validate", "mkbgrader.child.warmup", "triton", "triton.language", "cupy", "mkb_cuda",
                   # numba-cuda and JAX import without touching CUDA (numba's driver and JAX's backends start on first
                   # use, in the child, after the adapters' set-up); importing them costs each child 1 to 2 s.
                   "numba", "numba.cuda", "jax", "jax.experimental.pallas")


@dataclass(frozen=True)
class ChildTask:
    """`mkbgrader.child.<module>.<function>(*args, last)`, run where it is called: in the child, `last` is the
    message sender (or, for a pre-started child's warm-up, the task_waiting test). Picklable, so a pre-started
    child can be handed one."""

    module: str
    function: str
    args: tuple = ()

    def __call__(self, last: Any) -> None:
        entry = getattr(importlib.import_module(f"{CHILD_PACKAGE}.{self.module}"), self.function)
        entry(*self.args, last)


def preload() -> None:
    """Imports, once in the parent, the torch modules that patch torch functions when first imported.

    torch 2.x's torch._dynamo wraps torch.manual_seed and friends on import; importing it lazily inside a
    candidate's solve (Triton does) would look like tampering. It does not initialise CUDA.
    """
    try:
        importlib.import_module("torch._dynamo")
    except Exception:
        pass


def preload_for_server() -> str:
    """What a long-lived server imports before it says ready, so no grading pays for it (mkb holds the GPU lock
    during a grading): torch._dynamo (seconds), the child modules, and the installed DSL packages, which forked
    children then inherit instead of importing each time. None of it initialises CUDA. Anything these imports print
    goes to stderr: fd 1 is the protocol channel. Returns torch's version for the ready line."""
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        preload()
        for name in SERVER_PRELOADS:
            try:
                importlib.import_module(name)
            except Exception:  # a DSL package that is missing or broken is reported by the grading itself
                pass
    finally:
        os.dup2(saved, 1)
        os.close(saved)
    return torch_version()


def torch_version() -> str:
    """torch.__version__, as the ready line reports it (the server has loaded torch by then)."""
    return str(importlib.import_module("torch").__version__)
