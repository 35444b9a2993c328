"""A CPU stand-in for the few JAX and Pallas calls the candidates use, backed by torch, so that a candidate's own code
(its solve, jit body, block specs, index maps and kernel) runs here without JAX or a GPU.

It checks what it can of the Pallas rules the Triton lowering imposes: loaded and stored blocks have power-of-two
sizes and lie inside the array (the lowering's loads are unmasked), stores match the ref's shape and dtype, dot
operands share one dtype and every dot dimension is at least 16. It runs each program of the grid in turn, dots as
float32 products of the operands as given (fp16 operands are exact in float32; the sums round in float32, as the
tensor cores' float32 accumulation does, in another order). It proves nothing about JAX's tracing, the Triton
lowering, XLA or timing; JAX's type promotion is not modelled (torch's differs for 0-d tensors), so the kernels must
not mix dtypes in arithmetic, which they do not. Install with `install()` before importing a candidate."""

import itertools
import sys
import types

import torch


def _tensor(x, like=None):
    if isinstance(x, torch.Tensor):
        return x
    dtype = like.dtype if isinstance(like, torch.Tensor) and like.is_floating_point() else torch.float32
    return torch.tensor(x, dtype=dtype)


def _power_of_two(n):
    return n > 0 and n & (n - 1) == 0


class ShapeDtypeStruct:
    def __init__(self, shape, dtype):
        self.shape, self.dtype = tuple(shape), dtype


class BlockSpec:
    def __init__(self, block_shape, index_map):
        self.block_shape, self.index_map = tuple(block_shape), index_map


class CompilerParams:
    def __init__(self, num_warps=None, num_stages=None):
        assert num_warps is None or _power_of_two(num_warps)
        self.num_warps, self.num_stages = num_warps, num_stages


class Ref:
    def __init__(self, view):
        self.view = view
        self.shape, self.dtype = tuple(view.shape), view.dtype

    @staticmethod
    def _index(idx):
        idx = idx if isinstance(idx, tuple) else (idx,)
        return tuple(int(i) if isinstance(i, torch.Tensor) else i for i in idx)

    def __getitem__(self, idx):
        value = self.view[self._index(idx)]
        assert value.dim() == 0 or _power_of_two(value.numel()), f"load of shape {tuple(value.shape)}"
        return value.clone()

    def __setitem__(self, idx, value):
        target = self.view[self._index(idx)]
        assert isinstance(value, torch.Tensor) and value.dtype == self.dtype, (value.dtype, self.dtype)
        assert tuple(value.shape) == tuple(target.shape), (tuple(value.shape), tuple(target.shape))
        assert _power_of_two(value.numel()), f"store of shape {tuple(value.shape)}"
        target.copy_(value)


_PROGRAM = []


def _block(array, spec, program):
    index = spec.index_map(*program)
    index = index if isinstance(index, tuple) else (index,)
    assert len(index) == array.dim() == len(spec.block_shape), (index, tuple(array.shape), spec.block_shape)
    view = array
    taken = []
    for size, block, extent in zip(spec.block_shape, index, array.shape):
        block = int(block)
        if size is None:
            assert 0 <= block < extent
            taken.append(block)
        else:
            assert 0 <= block * size and (block + 1) * size <= extent, (block, size, extent)
            taken.append(slice(block * size, (block + 1) * size))
    return Ref(view[tuple(taken)])


def pallas_call(kernel, out_shape, grid, in_specs, out_specs, compiler_params=None, **unused):
    assert not unused, unused
    grid = grid if isinstance(grid, tuple) else (grid,)
    single = isinstance(out_shape, ShapeDtypeStruct)
    shapes = [out_shape] if single else list(out_shape)
    out_list = [out_specs] if single else list(out_specs)

    def run(*args):
        assert len(args) == len(in_specs)
        outs = [torch.full(s.shape, float("nan"), dtype=s.dtype) for s in shapes]
        for program in itertools.product(*(range(g) for g in grid)):
            _PROGRAM[:] = program
            refs = [_block(a, s, program) for a, s in zip(args, in_specs)]
            refs += [_block(o, s, program) for o, s in zip(outs, out_list)]
            kernel(*refs)
        _PROGRAM[:] = []
        return outs[0] if single else tuple(outs)

    return run


def program_id(axis):
    return _PROGRAM[axis]


def when(condition):
    """pl.when as a decorator: the body runs (at once, as in a traced kernel) only where the condition holds."""
    def run(body):
        if bool(condition):
            body()
        return body
    return run


def ds(start, size):
    start = int(start)
    return slice(start, start + size)


def _matmul(a, b, preferred_element_type):
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    assert a.dim() == b.dim() == 2 and a.shape[1] == b.shape[0]
    assert min(a.shape[0], a.shape[1], b.shape[1]) >= 16, (tuple(a.shape), tuple(b.shape))
    out = a.float() @ b.float()
    return out.to(preferred_element_type or a.dtype)


def dot(a, b, precision=None, preferred_element_type=None):
    return _matmul(a, b, preferred_element_type)


def dot_general(a, b, dimension_numbers, precision=None, preferred_element_type=None):
    ((ca,), (cb,)), batch = dimension_numbers
    assert batch == ((), ())
    return _matmul(a if ca == 1 else a.T, b if cb == 0 else b.T, preferred_element_type)


def broadcasted_iota(dtype, shape, dimension):
    view = [1] * len(shape)
    view[dimension] = shape[dimension]
    return torch.arange(shape[dimension]).view(view).expand(shape).to(dtype)


def fori_loop(lower, upper, body, carry):
    for i in range(int(lower), int(upper)):
        carry = body(i, carry)
    return carry


def lax_slice(x, start, limit):
    return x[tuple(slice(s, e) for s, e in zip(start, limit))]


def bitcast_convert_type(x, dtype):
    width_in, width_out = torch.finfo(x.dtype).bits, torch.finfo(dtype).bits
    if width_in == width_out:
        return x.view(dtype)
    assert width_out > width_in and x.shape[-1] == width_out // width_in, (tuple(x.shape), dtype)
    return x.contiguous().view(dtype).squeeze(-1)


def _where(condition, a, b):
    a, b = _tensor(a, b), _tensor(b, a)
    return torch.where(condition, a, b)


def _binary(op):
    return lambda a, b: op(_tensor(a, b), _tensor(b, a))


def _jit(fun=None, **unused):
    if fun is None:
        return lambda f: f
    return fun


def install():
    torch.Tensor.astype = lambda self, dtype: self.to(dtype)
    jax = types.ModuleType("jax")
    jnp = types.ModuleType("jax.numpy")
    lax = types.ModuleType("jax.lax")
    dlpack = types.ModuleType("jax.dlpack")
    experimental = types.ModuleType("jax.experimental")
    pallas = types.ModuleType("jax.experimental.pallas")
    triton = types.ModuleType("jax.experimental.pallas.triton")
    jnp.float32, jnp.float16, jnp.bfloat16, jnp.int32 = torch.float32, torch.float16, torch.bfloat16, torch.int32
    jnp.exp = lambda x: torch.exp(_tensor(x))
    jnp.log = lambda x: torch.log(_tensor(x))
    jnp.log1p = lambda x: torch.log1p(_tensor(x))
    jnp.maximum, jnp.minimum = _binary(torch.maximum), _binary(torch.minimum)
    jnp.where = _where
    jnp.zeros = lambda shape, dtype: torch.zeros(shape, dtype=dtype)
    jnp.sum = lambda x, axis=None: x.sum() if axis is None else x.sum(axis)
    jnp.dot = dot
    lax.dot_general, lax.broadcasted_iota, lax.fori_loop = dot_general, broadcasted_iota, fori_loop
    lax.cumsum = lambda x, axis=0: torch.cumsum(x, dim=axis)
    lax.slice, lax.bitcast_convert_type = lax_slice, bitcast_convert_type
    lax.Precision = types.SimpleNamespace(HIGHEST="highest", DEFAULT="default")
    dlpack.from_dlpack = lambda t: t
    jax.numpy, jax.lax, jax.dlpack, jax.experimental = jnp, lax, dlpack, experimental
    jax.jit, jax.ShapeDtypeStruct = _jit, ShapeDtypeStruct
    experimental.pallas = pallas
    pallas.triton = triton
    pallas.pallas_call, pallas.BlockSpec, pallas.program_id, pallas.ds = pallas_call, BlockSpec, program_id, ds
    pallas.when = when
    triton.CompilerParams = CompilerParams
    sys.modules.update({"jax": jax, "jax.numpy": jnp, "jax.lax": lax, "jax.dlpack": dlpack,
                        "jax.experimental": experimental, "jax.experimental.pallas": pallas,
                        "jax.experimental.pallas.triton": triton})
