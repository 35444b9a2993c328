"""Runtime compliance in the evaluation child: forbidden calls, launch observation and output dependence, tampering.

Output dependence (DSL launch → returned output) is checked by a probe run: `solve` is called once more on a
fresh clone of a correctness draw's inputs. Every observed launch is followed by a device-wide sync; tensor
arguments it changed count as written (floating arguments that look unchanged are checked by a second launch from
the same state with those arguments shifted, since stale memory may already hold the values written). Written
floating arguments are poisoned (NaN) right after their launch. Written integer and boolean arguments are poisoned
(bitwise not, not) only once `solve` has returned: a later launch of the same call may use them as indices or
offsets (a histogram, a scan, a sort), and poisoned indices would make it fault rather than answer. If every
returned output is bit-identical to the normal run, no returned output depends on what the DSL kernels wrote, so
the launches were decoration (e.g. the eager result returned and the kernel's result discarded). Limits, stated
honestly: an eager result routed through a DSL copy kernel does depend on the launch and passes this check (the
boundary rules in boundary.py, which watch the same probe run, catch it);
nondeterministic kernels always pass it; an integer kernel result that eager code copies or casts after the last
launch does not carry the (late) poison, so a solution whose outputs are all such copies is reported as
launch_unused (write the final integer outputs from the kernel).
"""

from __future__ import annotations

import ctypes
import os
import posix
import subprocess
import sys
import sysconfig
import threading
import time
from typing import Any, Callable, Optional

import torch

from mkbgrader.child import draws


class ComplianceViolation(BaseException):
    """Raised from a guard; a BaseException so `except Exception` in a candidate does not swallow it."""

    def __init__(self, rule: str, detail: str) -> None:
        super().__init__(f"{rule}: {detail}")
        self.rule = rule
        self.detail = detail


def _library_prefixes() -> tuple[str, ...]:
    """Installed packages (site-packages, dist-packages) and the grader's own folder."""
    paths = sysconfig.get_paths()
    prefixes = {paths.get(k, "") for k in ("purelib", "platlib")}
    prefixes.update(p for p in sys.path if p.endswith(("site-packages", "dist-packages")))
    prefixes.add(os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")))  # core/grader
    return tuple(os.path.realpath(p) + os.sep for p in prefixes if p)


def _stdlib_prefixes() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    return tuple(os.path.realpath(paths[k]) + os.sep for k in ("stdlib", "platstdlib") if paths.get(k))


class RuntimeGuard:
    """Wraps forbidden entry points; records the first violation; tracks launches per solve call."""

    def __init__(self, device: str) -> None:
        self.device = device
        self.violation: Optional[ComplianceViolation] = None
        self.launches = 0
        self.probing = False
        self.in_launch = False
        self.deferred_poison: list[torch.Tensor] = []  # integer/boolean arguments written during a probe run
        self.on_written: Optional[Callable[[torch.Tensor], None]] = None  # told of each tensor a probed launch wrote
        self.input_storages: set[int] = set()
        self._restore: list[tuple[Any, str, Any]] = []
        self._libraries = _library_prefixes()
        self._stdlib = _stdlib_prefixes()
        self._sync = torch.cuda.synchronize if device.startswith("cuda") else (lambda: None)
        self.tamper_watch: list[tuple[Any, str, Any]] = []
        self.foreign = ""  # the first compute a DSL adapter saw outside its kernels (judged under `strict`)

    # ----- forbidden calls -------------------------------------------------------------------------------
    def _from_candidate(self, depth: int = 2) -> bool:
        """True when the first frame outside the standard library (below the guard) is not a library's."""
        frame = sys._getframe(depth)
        while frame is not None:
            raw = frame.f_code.co_filename
            filename = raw if raw.startswith("<") else os.path.realpath(raw)
            in_library = filename.startswith(self._libraries)
            if raw.startswith("<frozen") or (filename.startswith(self._stdlib) and not in_library):
                frame = frame.f_back
                continue
            return not in_library
        return False

    def from_candidate_call(self) -> bool:
        """For a DSL adapter's hook: whether the code calling the hook is the candidate's (not a library's)."""
        return self._from_candidate(3)  # past this method and the adapter's hook: the hooked function's caller

    def foreign_compute(self, what: str) -> None:
        """A DSL adapter saw compute beside its kernels that torch's dispatcher cannot see (JAX primitives, host
        copies for numpy math); the first one is kept and the strict boundary reports it."""
        if not self.foreign:
            self.foreign = what

    def violate(self, rule: str, detail: str) -> ComplianceViolation:
        violation = ComplianceViolation(rule, detail)
        if self.violation is None:
            self.violation = violation
        return violation

    def _forbid(self, owner: Any, name: str, rule: str, what: str, always: bool = False) -> None:
        original = getattr(owner, name, None)
        if original is None:
            return
        guard_self = self

        def guard(*args: Any, **kwargs: Any) -> Any:
            if always or guard_self._from_candidate():
                raise guard_self.violate(rule, f"the kernel called {what}, which is forbidden")
            return original(*args, **kwargs)

        guard.__name__ = getattr(original, "__name__", name)
        setattr(owner, name, guard)
        self._restore.append((owner, name, original))
        self.tamper_watch.append((owner, name, guard))

    def install(self, problem_module: Any) -> None:
        self._forbid(torch, "compile", "torch_compile", "torch.compile") if hasattr(torch, "compile") else None
        self._forbid(torch.jit, "script", "torch_jit", "torch.jit.script")
        self._forbid(torch.jit, "trace", "torch_jit", "torch.jit.trace")
        for name in ("CUDAGraph", "graph", "make_graphed_callables", "graphs"):
            if hasattr(torch.cuda, name) and name != "graphs":
                self._forbid(torch.cuda, name, "cuda_graph", f"torch.cuda.{name}")
        for name in ("CDLL", "PyDLL", "cast", "memmove", "memset", "string_at"):
            self._forbid(ctypes, name, "ctypes", f"ctypes.{name}")
        self._forbid(ctypes.cdll, "LoadLibrary", "ctypes", "ctypes.cdll.LoadLibrary")
        self._forbid(subprocess, "Popen", "subprocess", "subprocess.Popen")
        for name in ("system", "popen", "fork", "forkpty", "execv", "execve", "execvp", "execvpe", "execl",
                     "execle", "execlp", "execlpe", "spawnv", "spawnve", "spawnvp", "spawnvpe", "spawnl",
                     "posix_spawn", "posix_spawnp", "_exit", "kill", "killpg", "setsid", "setpgid"):
            if hasattr(os, name):
                rule = "exit" if name == "_exit" else "subprocess"
                self._forbid(os, name, rule, f"os.{name}")
        for name in ("system", "fork", "forkpty", "execv", "execve", "posix_spawn", "posix_spawnp", "_exit", "kill",
                     "killpg", "setsid"):
            if hasattr(posix, name):
                self._forbid(posix, name, "exit" if name == "_exit" else "subprocess", f"posix.{name}")
        for name in ("reference", "make_inputs"):
            if hasattr(problem_module, name):
                self._forbid(problem_module, name, "calls_reference", f"the problem's {name}()", always=True)

    # ----- launches -------------------------------------------------------------------------------------
    def launch(self, args: Any, run: Callable[[], Any]) -> Any:
        """Called by a DSL adapter for every kernel launch it observes."""
        self.launches += 1
        if not self.probing:
            return run()
        self.in_launch = True
        try:
            tensors = [t for t in draws.tensors_in(list(args)) if isinstance(t, torch.Tensor)]
            before = [t.detach().clone() for t in tensors]
            result = run()
            self._sync()
            after = [t.detach().clone() for t in tensors]
            written = [not _bitwise_equal(new, old) for new, old in zip(after, before)]
            # A floating argument that looks unchanged may have been rewritten with the values its (stale) memory
            # already held. Relaunch from the same starting state with those arguments shifted, each by its own
            # step (v → v + k(1 + |v|)), so a copy or transpose of one shifted argument into another never lands
            # on that one's shifted values: elements that do not keep the shifted value were written.
            ambiguous = [i for i, t in enumerate(tensors) if t.is_floating_point() and not written[i]]
            if ambiguous:
                for tensor, old in zip(tensors, before):
                    tensor.copy_(old)
                shifted = {i: _shifted(before[i], step) for step, i in enumerate(ambiguous, start=1)}
                for i in ambiguous:
                    tensors[i].copy_(shifted[i])
                run()
                self._sync()
                for i in ambiguous:
                    written[i] = not _bitwise_equal(tensors[i], shifted[i])
            for tensor, state, was_written in zip(tensors, after, written):
                tensor.copy_(state)
                if not was_written:
                    continue
                if self.on_written is not None:
                    self.on_written(tensor)
                if tensor.is_floating_point() or tensor.is_complex():
                    _poison(tensor)
                else:
                    self.deferred_poison.append(tensor)
        finally:
            self.in_launch = False
        return result

    def poison_deferred(self) -> None:
        """Poisons the integer and boolean arguments the probe run's launches wrote (call once `solve` returned)."""
        self._sync()
        for tensor in self.deferred_poison:
            _poison(tensor)
        self.deferred_poison.clear()
        self._sync()

    # ----- tampering ------------------------------------------------------------------------------------
    def watch(self, owner: Any, name: str) -> None:
        if hasattr(owner, name):
            self.tamper_watch.append((owner, name, getattr(owner, name)))

    def watch_defaults(self, grader_modules: list[Any]) -> None:
        for name in ("perf_counter", "perf_counter_ns", "time", "monotonic", "sleep"):
            self.watch(time, name)
        for name in ("synchronize", "Event", "current_stream", "Stream", "set_stream", "stream"):
            self.watch(torch.cuda, name)
        for name in ("record", "elapsed_time", "synchronize", "query", "wait"):
            self.watch(torch.cuda.Event, name)
        for name in ("manual_seed", "equal", "isfinite", "isnan", "where", "empty", "zeros_like"):
            self.watch(torch, name)
        for name in ("clone", "to", "abs", "max", "sum", "item", "copy_", "__eq__", "__ne__", "__sub__", "cpu"):
            self.watch(torch.Tensor, name)
        for module in grader_modules:
            for name, value in list(vars(module).items()):
                if callable(value) and not name.startswith("__"):
                    self.watch(module, name)

    def tampered(self) -> str:
        for owner, name, expected in self.tamper_watch:
            if getattr(owner, name, None) is not expected:
                owner_name = getattr(owner, "__name__", type(owner).__name__)
                return f"{owner_name}.{name} was replaced during the evaluation"
        return ""

    def thread_count(self) -> int:
        return threading.active_count()


def _is_fp8(tensor: torch.Tensor) -> bool:
    """One-byte floats (float8_e4m3fn, float8_e5m2, ...): casts work on them, arithmetic kernels mostly do not."""
    return tensor.is_floating_point() and tensor.element_size() == 1


def _bitwise_equal(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.is_floating_point():
        if _is_fp8(a):
            a, b = a.float(), b.float()  # exact: every fp8 value is a float32 value
        return bool(((a == b) | (torch.isnan(a) & torch.isnan(b))).all())
    return torch.equal(a, b)


def _shifted(tensor: torch.Tensor, step: int = 1) -> torch.Tensor:
    """A copy of a floating tensor that differs from it in every element: v + step·(1 + |v|) (NaN elements become
    the step)."""
    if _is_fp8(tensor):
        # v + 1 + |v| would leave fp8's range (and fp8 has no add kernel); the negation is exact, zero becomes one.
        wide = tensor.float()
        return torch.where(wide == 0, torch.ones_like(wide), -wide).nan_to_num(1.0).to(tensor.dtype)
    return (tensor + step * (1 + tensor.abs())).nan_to_num(float(step))


def _poison(tensor: torch.Tensor) -> None:
    with torch.no_grad():
        if _is_fp8(tensor):
            tensor.copy_(torch.full(tensor.shape, float("nan"), device=tensor.device))
        elif tensor.is_floating_point() or tensor.is_complex():
            tensor.fill_(float("nan"))
        elif tensor.dtype == torch.bool:
            tensor.logical_not_()
        else:
            tensor.bitwise_not_()


def outputs_identical(first: Any, second: Any) -> bool:
    """Bitwise equality of two output trees (NaN equals NaN), used by the output-dependence probe."""
    a, b = draws.tensors_in(first), draws.tensors_in(second)
    if len(a) != len(b):
        return False
    if not a:
        return first == second
    return all(_bitwise_equal(x, y) for x, y in zip(a, b))


def dependent_leaves(first: Any, second: Any) -> list[bool]:
    """Per returned tensor (draws.tensors_in's order): whether it changed between the normal and the poisoned run."""
    a, b = draws.tensors_in(first), draws.tensors_in(second)
    if len(a) != len(b):
        return [True] * len(a)
    return [not _bitwise_equal(x, y) for x, y in zip(a, b)]
