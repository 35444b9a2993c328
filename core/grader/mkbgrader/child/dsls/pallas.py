"""Adapter for JAX Pallas on GPU (pallas_call, lowered through Triton or Mosaic GPU): launches are executions of pallas
kernels, eager or inside a jax.jit function.

Set up in the grader child before jax is imported: XLA_PYTHON_CLIENT_PREALLOCATE=false, so that JAX takes GPU memory
as it needs it instead of 75% of the device at start, which would leave torch (the problem's inputs, the reference,
the memory budget) too little; JAX_PLATFORMS stays as the caller set it.

How launches are seen. `pallas_call(...)` returns a function; each call of it is a launch when it runs eagerly. Inside
`jax.jit` the kernel is traced once and the compiled program runs later without Python, so `jax.jit` is wrapped too:
a jitted function whose trace called a pallas kernel counts one launch each time it runs. The launch's results are
JAX arrays, not torch tensors, so the output-dependence probe poisons them (NaN, bitwise not) as they leave the launch.

The strict boundary. Every JAX primitive bound while the candidate's own code is on the stack, outside a pallas
kernel's trace and outside JAX's lowering, is eager JAX compute unless it only moves data (reshape, transpose,
broadcast, convert, slice, concatenate, copy, device_put, nested jit calls); the first such primitive is reported as
eager compute under `strict`. Limits: under `mkb` an eager jax.numpy result routed through a pallas copy kernel is
not recognised (jax ops are not torch ops, so the boundary's torch-side check does not see them); a jitted function
is traced once per input signature, so what it binds is judged once.
"""

from __future__ import annotations

import functools
import os
import sys
from typing import Any, Optional

from mkbgrader.child.dsls import Adapter

# JAX primitives that allocate, view, copy, cast or move data: what `strict` allows beside pallas kernels.
DATA_MOVEMENT_PRIMITIVES = frozenset("""
reshape transpose broadcast_in_dim squeeze expand_dims convert_element_type bitcast_convert_type slice dynamic_slice
concatenate split rev copy copy_p device_put iota pjit jit closed_call core_call remat custom_jvp_call custom_vjp_call
custom_vjp_call_jaxpr pallas_call name optimization_barrier
""".split())

# Frames in these parts of JAX are lowering or kernel machinery, never the candidate's own compute.
_STOP_PARTS = (os.sep + os.path.join("jax", "_src", "pallas") + os.sep,
               os.sep + os.path.join("jax", "_src", "interpreters", "mlir.py"),
               os.sep + os.path.join("jax", "_src", "interpreters", "pxla.py"))


class PallasAdapter(Adapter):
    name = "pallas"
    own_stream = True  # JAX dispatches on its own CUDA stream
    install_hint = "pip install 'jax[cuda13]' (jax with its CUDA plugin; Pallas ships with jax)"

    def prepare(self) -> Optional[str]:
        os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
        try:
            import jax
            from jax.experimental import pallas
        except ImportError as error:
            return self.missing("jax.experimental.pallas", error)
        self.jax, self.pallas = jax, pallas
        return None

    # ----- hooks -------------------------------------------------------------------------------------------------
    def observe(self, guard: Any) -> list[tuple[Any, str]]:
        self.guard = guard
        self.inside_kernel = 0   # > 0 while a pallas kernel is traced or launched
        self.own = 0             # > 0 while the adapter itself runs JAX (poisoning)
        self.traced_kernel = 0   # pallas kernels met while tracing: marks the jitted function being traced
        watched = []
        original_call = self.pallas.pallas_call

        @functools.wraps(original_call)
        def pallas_call(*args: Any, **kwargs: Any) -> Any:
            return self._counted_kernel(original_call(*args, **kwargs))

        self.pallas.pallas_call = pallas_call
        watched.append((self.pallas, "pallas_call"))
        original_jit = self.jax.jit

        @functools.wraps(original_jit)
        def jit(fun: Any = None, *args: Any, **kwargs: Any) -> Any:
            if fun is None:  # jax.jit(static_argnames=...) used as a decorator factory
                return lambda f: jit(f, *args, **kwargs)
            return _JittedKernel(self, original_jit(fun, *args, **kwargs))

        self.jax.jit = jit
        watched.append((self.jax, "jit"))
        watched.extend(self._watch_binds())
        return watched

    def _counted_kernel(self, kernel: Any) -> Any:
        adapter = self

        @functools.wraps(kernel)
        def launch(*args: Any, **kwargs: Any) -> Any:
            adapter.traced_kernel += 1
            if adapter._tracing(args):
                adapter.inside_kernel += 1
                try:
                    return kernel(*args, **kwargs)
                finally:
                    adapter.inside_kernel -= 1
            return adapter._launch(args, lambda: kernel(*args, **kwargs))

        return launch

    def _launch(self, args: Any, run: Any) -> Any:
        def counted() -> Any:
            self.inside_kernel += 1
            try:
                return run()
            finally:
                self.inside_kernel -= 1

        result = self.guard.launch(list(args), counted)
        if self.guard.probing:
            result = self._poisoned(result)
        return result

    def _tracing(self, args: Any) -> bool:
        try:
            from jax._src.core import Tracer as tracer
        except ImportError:
            tracer = getattr(sys.modules.get("jax.core"), "Tracer", None)
        leaves = self.jax.tree_util.tree_leaves(args)
        return tracer is not None and any(isinstance(leaf, tracer) for leaf in leaves)

    def _poisoned(self, result: Any) -> Any:
        jnp = sys.modules.get("jax.numpy") or __import__("jax.numpy").numpy
        self.own += 1
        try:
            def poison(leaf: Any) -> Any:
                dtype = getattr(leaf, "dtype", None)
                if dtype is None:
                    return leaf
                if jnp.issubdtype(dtype, jnp.inexact):
                    return jnp.full_like(leaf, float("nan"))
                if dtype == jnp.bool_:
                    return jnp.logical_not(leaf)
                return jnp.invert(leaf)

            return self.jax.tree_util.tree_map(poison, result)
        finally:
            self.own -= 1

    # ----- the strict boundary: eager JAX compute outside pallas kernels --------------------------------------------
    def _watch_binds(self) -> list[tuple[Any, str]]:
        try:
            from jax._src import core
        except ImportError:
            return []
        primitive = getattr(core, "Primitive", None)
        if primitive is None or not hasattr(primitive, "bind"):
            return []
        original = primitive.bind
        adapter = self

        def bind(prim: Any, *args: Any, **params: Any) -> Any:
            name = getattr(prim, "name", "")
            if (not adapter.inside_kernel and not adapter.own and name not in DATA_MOVEMENT_PRIMITIVES
                    and adapter._candidate_on_stack()):
                adapter.guard.foreign_compute(f"jax primitive {name} (eager JAX compute outside a pallas kernel)")
            return original(prim, *args, **params)

        primitive.bind = bind
        return [(primitive, "bind")]

    def _candidate_on_stack(self) -> bool:
        """True when a frame of the candidate's own code calls (through libraries) into this bind, with no JAX
        lowering or pallas machinery in between."""
        guard = self.guard
        frame = sys._getframe(2)
        while frame is not None:
            raw = frame.f_code.co_filename
            if raw.startswith("<"):
                frame = frame.f_back
                continue
            filename = os.path.realpath(raw)
            if any(part in filename for part in _STOP_PARTS):
                return False
            in_library = filename.startswith(guard._libraries)
            if not in_library and not filename.startswith(guard._stdlib):
                return True
            frame = frame.f_back
        return False


class _JittedKernel:
    """A jax.jit function: counted as one launch per run once a trace of it met a pallas kernel."""

    def __init__(self, adapter: PallasAdapter, jitted: Any) -> None:
        self._adapter, self._jitted = adapter, jitted
        self._has_kernel = False
        functools.update_wrapper(self, jitted)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        adapter = self._adapter
        if adapter.inside_kernel or adapter._tracing(args):  # nested in another trace: that one counts
            before = adapter.traced_kernel
            result = self._jitted(*args, **kwargs)
            self._has_kernel = self._has_kernel or adapter.traced_kernel != before
            return result
        before = adapter.traced_kernel
        if self._has_kernel:
            return adapter._launch(args, lambda: self._jitted(*args, **kwargs))
        result = self._jitted(*args, **kwargs)  # the first run traces: did it meet a kernel?
        if adapter.traced_kernel != before:
            self._has_kernel = True
            adapter.guard.launch(list(args), lambda: None)  # this run launched it: count it
            if adapter.guard.probing:
                result = adapter._poisoned(result)
        return result

    def __getattr__(self, name: str) -> Any:
        return getattr(self._jitted, name)

    def __get__(self, instance: Any, owner: Any) -> Any:
        return self if instance is None else functools.partial(self, instance)


def make(descriptor: dict) -> Adapter:
    return PallasAdapter(descriptor)
