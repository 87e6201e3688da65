"""A reference evaluator of tensor expressions on numpy arrays, for tests.

Every compute stage is evaluated over its whole index space at once: each axis variable becomes
an ``arange`` laid along its own array dimension, so an expression evaluates to an array that
broadcasts to the stage's shape. Reductions fold one reduction point at a time, in order, so
tie-breaking reducers (argmax) see the same order as a loop nest.

A load whose indices fall outside its tensor is an error, except where an enclosing
``if_then_else`` discards the value (padding reads of the kind ``topi.nn.pad`` emits), so the
evaluator also catches out-of-bounds reads that a compiled kernel would perform.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ..te.tensor import ComputeOp, PlaceholderOp, Tensor
from ..tir import expr as E

__all__ = ["evaluate"]

Array = Any  # numpy array or numpy scalar

#: Integer bit operations (``tir.bitwise_*``).
_BITWISE: dict[str, Callable[[Array, Array], Array]] = {
    "tir.bitwise_and": np.bitwise_and,
    "tir.bitwise_or": np.bitwise_or,
    "tir.bitwise_xor": np.bitwise_xor,
}

_UNARY: dict[str, Callable[[Array], Array]] = {
    "tir.exp": np.exp,
    "tir.log": np.log,
    "tir.sqrt": np.sqrt,
    "tir.rsqrt": lambda x: 1 / np.sqrt(x),
    "tir.tanh": np.tanh,
    "tir.sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "tir.floor": np.floor,
    "tir.ceil": np.ceil,
    "tir.round": np.rint,
    "tir.fabs": np.abs,
    "tir.trunc": np.trunc,
    "tir.exp2": np.exp2,
    "tir.log2": np.log2,
    "tir.log10": np.log10,
    "tir.sin": np.sin,
    "tir.cos": np.cos,
}
_BINARY: dict[type, Callable[[Array, Array], Array]] = {
    E.Add: np.add,
    E.Sub: np.subtract,
    E.Mul: np.multiply,
    E.FloorDiv: np.floor_divide,
    E.FloorMod: np.mod,
    E.Min: np.minimum,
    E.Max: np.maximum,
    E.EQ: np.equal,
    E.NE: np.not_equal,
    E.LT: np.less,
    E.LE: np.less_equal,
    E.GT: np.greater,
    E.GE: np.greater_equal,
    E.And: np.logical_and,
    E.Or: np.logical_or,
}


def _np_dtype(dtype: str) -> np.dtype[Any]:
    return np.dtype("bool" if dtype == "bool" else dtype)


def _erf(x: Array) -> Array:
    return np.vectorize(math.erf, otypes=[np.asarray(x).dtype])(x)


def _trunc_div(a: Array, b: Array, dtype: str) -> Array:
    if E.is_float(dtype):
        return np.true_divide(a, b)
    q = np.abs(a) // np.abs(b)
    return np.where((a >= 0) == (b >= 0), q, -q)


class _Evaluator:
    """Evaluates expressions of one stage; ``env`` maps variables to index arrays or scalars."""

    def __init__(self, values: Mapping[tuple[int, int], Array], env: dict[int, Array]) -> None:
        self.values = values
        self.env = env
        self.guard: Array = True  # where the current value is actually used

    def __call__(self, node: E.PrimExpr) -> Array:  # noqa: PLR0911, PLR0912 - one case per kind
        kind = type(node)
        dt = getattr(node, "dtype", "")
        if isinstance(node, (E.IntImm, E.FloatImm)):
            return _np_dtype(dt).type(node.value)
        if isinstance(node, E.Var):
            if id(node) not in self.env:
                raise KeyError(f"te_eval: unbound variable {node.name}")
            return self.env[id(node)]
        if kind in _BINARY:
            a, b = self(node.a), self(node.b)  # type: ignore[attr-defined]
            with np.errstate(all="ignore"):
                out = _BINARY[kind](a, b)
            return np.asarray(out).astype(_np_dtype(dt))
        if isinstance(node, (E.Div, E.Mod)):
            a, b = self(node.a), self(node.b)
            with np.errstate(all="ignore"):
                q = _trunc_div(a, b, node.a.dtype)
                out = q if isinstance(node, E.Div) else a - q * b
            return np.asarray(out).astype(_np_dtype(dt))
        if isinstance(node, E.Not):
            return np.logical_not(self(node.a))
        if isinstance(node, E.Select):
            c = self(node.condition)
            return np.asarray(np.where(c, self(node.true_value), self(node.false_value))).astype(
                _np_dtype(dt)
            )
        if isinstance(node, E.Cast):
            v = np.asarray(self(node.value))
            if E.is_int(dt) and E.is_float(v.dtype.name):
                with np.errstate(all="ignore"):
                    v = np.trunc(v)
            with np.errstate(all="ignore"):
                return v.astype(_np_dtype(dt))
        if isinstance(node, E.Let):
            self.env[id(node.var)] = self(node.value)
            return self(node.body)
        if isinstance(node, E.Call):
            return self._call(node)
        if isinstance(node, E.ProducerLoad):
            return self._load(node)
        if isinstance(node, E.Reduce):
            raise ValueError("te_eval: a reduction must be a whole stage body")
        raise TypeError(f"te_eval: cannot evaluate {kind.__name__} ({node})")

    def _call(self, node: E.Call) -> Array:  # noqa: PLR0911 - one case per intrinsic kind
        args = node.args
        dt = _np_dtype(node.dtype)
        if node.op == "tir.if_then_else":
            c = np.asarray(self(args[0]))
            outer = self.guard
            self.guard = np.logical_and(outer, c)
            t = self(args[1])
            self.guard = np.logical_and(outer, np.logical_not(c))
            f = self(args[2])
            self.guard = outer
            return np.asarray(np.where(c, t, f)).astype(dt)
        with np.errstate(all="ignore"):
            if node.op in _UNARY:
                return np.asarray(_UNARY[node.op](self(args[0]))).astype(dt)
            if node.op == "tir.reinterpret":
                return np.asarray(self(args[0])).view(dt)
            if node.op == "tir.erf":
                return np.asarray(_erf(self(args[0]))).astype(dt)
            if node.op == "tir.pow":
                return np.power(self(args[0]), self(args[1])).astype(dt)
            if node.op == "tir.fmod":
                return np.fmod(self(args[0]), self(args[1])).astype(dt)
            if node.op in _BITWISE:
                return np.asarray(_BITWISE[node.op](self(args[0]), self(args[1]))).astype(dt)
        raise TypeError(f"te_eval: unknown intrinsic {node.op}")

    def _load(self, node: E.ProducerLoad) -> Array:
        data = self.values[_key(node.producer)]
        idx = [np.asarray(self(i)).astype(np.int64) for i in node.indices]
        if not idx:
            return data[()]
        bidx = np.broadcast_arrays(*idx, np.asarray(self.guard))
        guard = bidx[-1]
        clipped = []
        for axis, (ix, extent) in enumerate(zip(bidx[:-1], data.shape, strict=True)):
            bad = ((ix < 0) | (ix >= extent)) & guard
            if np.any(bad):
                where = tuple(int(np.argwhere(bad)[0][k]) for k in range(bad.ndim))
                raise IndexError(
                    f"te_eval: {node.producer.name} read out of bounds on axis {axis} "
                    f"(index {int(ix[bad].flat[0])}, extent {extent}) at point {where}"
                )
            clipped.append(np.clip(ix, 0, max(extent - 1, 0)))
        return data[tuple(clipped)]


def _key(t: Tensor) -> tuple[int, int]:
    return (id(t.op), t.value_index)


def _int(expr: E.PrimExpr, env: Mapping[int, Array], what: str) -> int:
    ev = _Evaluator({}, dict(env))
    value = ev(expr)
    if np.ndim(value) != 0:
        raise ValueError(f"te_eval: {what} is not a scalar")
    return int(value)


def _eval_compute(
    op: ComputeOp, values: Mapping[tuple[int, int], Array], env: dict[int, Array]
) -> list[Array]:
    shape = [_int(iv.dom.extent, env, f"extent of {op.name}") for iv in op.axis if iv.dom]
    nd = len(shape)
    local = dict(env)
    for k, iv in enumerate(op.axis):
        view = [1] * nd
        view[k] = shape[k]
        local[id(iv.var)] = np.arange(shape[k], dtype=_np_dtype(iv.var.dtype)).reshape(view)
    first = op.body[0]
    if isinstance(first, E.Reduce):
        results = _eval_reduce(op, first, values, local)
    else:
        ev = _Evaluator(values, local)
        results = [ev(b) for b in op.body]
    return [
        np.array(np.broadcast_to(r, shape), dtype=_np_dtype(b.dtype), order="C")
        for r, b in zip(results, op.body, strict=True)
    ]


def _eval_reduce(
    op: ComputeOp, red: E.Reduce, values: Mapping[tuple[int, int], Array], env: dict[int, Array]
) -> list[Array]:
    comb = red.combiner
    ranges = []
    for iv in red.axis:
        assert iv.dom is not None
        lo = _int(iv.dom.min, env, "reduce min")
        ranges.append(range(lo, lo + _int(iv.dom.extent, env, "reduce extent")))
    ev = _Evaluator(values, env)
    if red.init:
        acc = [ev(i) for i in red.init]
    else:
        acc = [ev(i) for i in comb.identity_element]
    for point in itertools.product(*ranges):
        for iv, v in zip(red.axis, point, strict=True):
            env[id(iv.var)] = np.asarray(v, dtype=_np_dtype(iv.var.dtype))
        cond = ev(red.condition)
        src = [ev(s) for s in red.source]
        cenv = dict(env)
        for var, a in zip(comb.lhs, acc, strict=True):
            cenv[id(var)] = a
        for var, s in zip(comb.rhs, src, strict=True):
            cenv[id(var)] = s
        cev = _Evaluator(values, cenv)
        new = [cev(r) for r in comb.result]
        acc = [np.where(cond, n, a) for n, a in zip(new, acc, strict=True)]
    return acc


def _topo(outputs: Sequence[Tensor]) -> list[Any]:
    order: list[Any] = []
    seen: set[int] = set()

    def visit(op: Any) -> None:
        if id(op) in seen:
            return
        seen.add(id(op))
        for t in op.input_tensors:
            visit(t.op)
        order.append(op)

    for t in outputs:
        visit(t.op)
    return order


def evaluate(
    outputs: Tensor | Sequence[Tensor],
    inputs: Mapping[Tensor, Array],
    scalars: Mapping[E.Var, int] | None = None,
) -> list[np.ndarray[Any, Any]]:
    """Evaluate ``outputs`` given numpy arrays for the placeholders they read.

    Symbolic dimensions are bound from the input arrays' shapes (or ``scalars``).

    Examples
    --------
    >>> import numpy as np
    >>> from pytvm import te
    >>> from pytvm.testing.te_eval import evaluate
    >>> A = te.placeholder((3,), name="A")
    >>> B = te.compute((3,), lambda i: A[i] * 2.0, name="B")
    >>> evaluate(B, {A: np.arange(3, dtype="float32")})[0].tolist()
    [0.0, 2.0, 4.0]
    """
    outs = [outputs] if isinstance(outputs, Tensor) else list(outputs)
    env: dict[int, Array] = {}
    for var, value in (scalars or {}).items():
        env[id(var)] = np.asarray(value, dtype=_np_dtype(var.dtype))
    values: dict[tuple[int, int], Array] = {}
    for t, arr in inputs.items():
        a = np.asarray(arr)
        if a.ndim != t.ndim:
            raise ValueError(f"te_eval: input {t.name} has {a.ndim} dims, expected {t.ndim}")
        for dim, size in zip(t.shape, a.shape, strict=True):
            if isinstance(dim, E.Var):
                env.setdefault(id(dim), np.asarray(size, dtype=_np_dtype(dim.dtype)))
        values[_key(t)] = a
    for op in _topo(outs):
        if isinstance(op, PlaceholderOp):
            got = values.get((id(op), 0))
            if got is None:
                raise ValueError(f"te_eval: no value for placeholder {op.name}")
            want = [_int(d, env, f"shape of {op.name}") for d in op.shape]
            if list(got.shape) != want or got.dtype != _np_dtype(op.dtype):
                raise ValueError(
                    f"te_eval: input {op.name}: expected {want} {op.dtype}, got "
                    f"{list(got.shape)} {got.dtype}"
                )
            continue
        if not isinstance(op, ComputeOp):
            raise TypeError(f"te_eval: cannot evaluate operation {op}")
        for k, r in enumerate(_eval_compute(op, values, env)):
            values[(id(op), k)] = r
    return [values[_key(t)] for t in outs]
