"""Constant folding over harness expressions: numbers, strings, tuples and torch dtypes, never running any code."""

from __future__ import annotations

import ast
import operator
from dataclasses import dataclass
from typing import Any

# torch dtype names and their sizes in bytes.
DTYPE_BYTES = {
    "float16": 2, "half": 2, "bfloat16": 2, "float32": 4, "float": 4, "float64": 8, "double": 8,
    "int8": 1, "uint8": 1, "bool": 1, "int16": 2, "short": 2, "int32": 4, "int": 4, "int64": 8, "long": 8,
    "complex64": 8, "cfloat": 8, "complex128": 16, "cdouble": 16,
}


@dataclass(frozen=True)
class Dtype:
    name: str


class _Nothing:
    def __repr__(self) -> str:
        return "NOTHING"


NOTHING: Any = _Nothing()  # "not a constant"

_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
           ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow}
_NUMBER = (int, float)
_COMPARE = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
            ast.Gt: operator.gt, ast.GtE: operator.ge, ast.In: lambda a, b: a in b,
            ast.NotIn: lambda a, b: a not in b, ast.Is: operator.is_, ast.IsNot: operator.is_not}
_COMPLEX = {"complex64", "cfloat", "complex128", "cdouble"}
_FLOATING = {"float16", "half", "bfloat16", "float32", "float", "float64", "double"}


def fold(node: ast.expr, env: dict[str, Any]) -> Any:
    """The value of `node` when it is built from literals and constant names only, else NOTHING."""
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, (int, float, str, bool, type(None))) else NOTHING
    if isinstance(node, ast.Name):
        return env.get(node.id, NOTHING)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "torch":
        return Dtype(node.attr) if node.attr in DTYPE_BYTES else NOTHING
    if isinstance(node, ast.Attribute) and node.attr in ("is_complex", "is_floating_point"):
        dtype = fold(node.value, env)
        if isinstance(dtype, Dtype):
            return dtype.name in (_COMPLEX if node.attr == "is_complex" else _FLOATING)
        return NOTHING
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _COMPARE:
        left, right = fold(node.left, env), fold(node.comparators[0], env)
        if left is NOTHING or right is NOTHING:
            return NOTHING
        try:
            return bool(_COMPARE[type(node.ops[0])](left, right))
        except TypeError:
            return NOTHING
    if isinstance(node, (ast.Tuple, ast.List)):
        values = [fold(e, env) for e in node.elts]
        if any(v is NOTHING for v in values):
            return NOTHING
        return tuple(values) if isinstance(node, ast.Tuple) else list(values)
    if isinstance(node, ast.UnaryOp):
        value = fold(node.operand, env)
        if isinstance(value, _NUMBER) and isinstance(node.op, (ast.USub, ast.UAdd)):
            return -value if isinstance(node.op, ast.USub) else value
        if isinstance(node.op, ast.Not) and value is not NOTHING:
            return not value
        return NOTHING
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = fold(node.left, env), fold(node.right, env)
        if not (isinstance(left, _NUMBER) and isinstance(right, _NUMBER)):
            return NOTHING
        if isinstance(node.op, ast.Pow) and abs(right) > 64:
            return NOTHING
        try:
            return _BINARY[type(node.op)](left, right)
        except (ArithmeticError, ValueError):
            return NOTHING
    return NOTHING


def to_ast(value: Any) -> ast.expr:
    """The literal that spells a folded value."""
    if isinstance(value, Dtype):
        return ast.Attribute(value=ast.Name("torch", ast.Load()), attr=value.name, ctx=ast.Load())
    if isinstance(value, tuple):
        return ast.Tuple([to_ast(v) for v in value], ast.Load())
    if isinstance(value, list):
        return ast.List([to_ast(v) for v in value], ast.Load())
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value < 0:
        return ast.UnaryOp(ast.USub(), ast.Constant(-value))
    return ast.Constant(value)


def bind_constant(statement: ast.stmt, env: dict[str, Any]) -> bool:
    """Records `name = <constant>` (or a tuple of them) in env; False for any other statement."""
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
        return False
    target = statement.targets[0]
    value = fold(statement.value, env)
    if isinstance(target, ast.Name) and value is not NOTHING:
        env[target.id] = value
        return True
    if (isinstance(target, ast.Tuple) and all(isinstance(t, ast.Name) for t in target.elts)
            and isinstance(value, (tuple, list)) and len(value) == len(target.elts)):
        env.update({t.id: v for t, v in zip(target.elts, value)})
        return True
    return False


def constants_of(statements: list[ast.stmt]) -> dict[str, Any]:
    """The constant names in force after `statements` run, in order."""
    env: dict[str, Any] = {}
    for statement in statements:
        if not bind_constant(statement, env):
            for node in ast.walk(statement):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    env.pop(node.id, None)
    return env
