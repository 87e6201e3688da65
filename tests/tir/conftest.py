"""Every loop-IR test runs with ``tir.verify`` after each pass; ``run_tir`` interprets a kernel.

``run_tir(func, arrays, scalars)`` executes a ``PrimFunc`` on numpy arrays (one per buffer
parameter, in order, updated in place), with C semantics for integer ``/`` and ``%`` and
lane-wise vectors, so a test can check that a pass keeps what a kernel computes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import pytest

from pytvm import tir
from pytvm.ir.transform import PassContext


@pytest.fixture(autouse=True)
def _verify_every_pass() -> Iterator[None]:
    with PassContext(config={"tir.verify": True}):
        yield


def _c_div(a: Any, b: Any) -> Any:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.trunc(np.asarray(a) / np.asarray(b)).astype(np.int64)
    return int(a / b) if b else 0


_CALLS: dict[str, Callable[..., Any]] = {
    "tir.exp": np.exp,
    "tir.log": np.log,
    "tir.sqrt": np.sqrt,
    "tir.rsqrt": lambda x: 1 / np.sqrt(x),
    "tir.sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "tir.tanh": np.tanh,
    "tir.floor": np.floor,
    "tir.fabs": np.abs,
    "tir.likely": lambda x: x,
}

_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    tir.Add: lambda a, b: a + b,
    tir.Sub: lambda a, b: a - b,
    tir.Mul: lambda a, b: a * b,
    tir.FloorDiv: lambda a, b: a // b,
    tir.FloorMod: lambda a, b: a % b,
    tir.Min: np.minimum,
    tir.Max: np.maximum,
    tir.LT: lambda a, b: a < b,
    tir.LE: lambda a, b: a <= b,
    tir.GT: lambda a, b: a > b,
    tir.GE: lambda a, b: a >= b,
    tir.EQ: lambda a, b: a == b,
    tir.NE: lambda a, b: a != b,
    tir.And: np.logical_and,
    tir.Or: np.logical_or,
}


class _Interpreter:
    def __init__(self) -> None:
        self.env: dict[tir.Var, Any] = {}
        self.memory: dict[tir.Var, np.ndarray] = {}

    def flat(self, buf: tir.Buffer, indices: Sequence[tir.PrimExpr]) -> Any:
        values = [self.expr(i) for i in indices]
        if buf.strides:
            strides = [self.expr(s) for s in buf.strides]
        else:
            shape = [self.expr(s) for s in buf.shape]
            strides = [math.prod(shape[k + 1 :]) for k in range(len(shape))]
        total: Any = 0
        for v, s in zip(values, strides, strict=True):
            total = total + np.asarray(v) * s if isinstance(v, np.ndarray) else total + v * s
        return total

    def expr(self, e: Any) -> Any:  # noqa: PLR0911, PLR0912 - one case per node kind
        if isinstance(e, (tir.IntImm, tir.FloatImm)):
            return e.value
        if isinstance(e, tir.Var):
            return self.env[e]
        if isinstance(e, tir.Ramp):
            base, stride = self.expr(e.base), self.expr(e.stride)
            return base + stride * np.arange(e.lanes)
        if isinstance(e, tir.Broadcast):
            return np.full(e.lanes, self.expr(e.value))
        if isinstance(e, tir.BufferLoad):
            return self.memory[e.buffer.data][self.flat(e.buffer, e.indices)]
        if isinstance(e, tir.Div):
            a, b = self.expr(e.a), self.expr(e.b)
            return _c_div(a, b) if tir.expr.is_int(e.dtype) else a / b
        if isinstance(e, tir.Mod):
            a, b = self.expr(e.a), self.expr(e.b)
            return a - _c_div(a, b) * b
        if type(e) in _BINARY:
            return _BINARY[type(e)](self.expr(e.a), self.expr(e.b))
        if isinstance(e, tir.Not):
            return np.logical_not(self.expr(e.a))
        if isinstance(e, tir.Select):
            return np.where(
                self.expr(e.condition), self.expr(e.true_value), self.expr(e.false_value)
            )
        if isinstance(e, tir.Cast):
            v = self.expr(e.value)
            if tir.expr.is_int(e.dtype):
                return np.trunc(v).astype(np.int64) if isinstance(v, np.ndarray) else int(v)
            return v * 1.0
        if isinstance(e, tir.Call):
            if e.op == "tir.if_then_else":
                cond = self.expr(e.args[0])
                return self.expr(e.args[1] if cond else e.args[2])
            return _CALLS[e.op](*(self.expr(a) for a in e.args))
        if isinstance(e, tir.Let):
            self.env[e.var] = self.expr(e.value)
            return self.expr(e.body)
        raise NotImplementedError(type(e).__name__)

    def stmt(self, s: Any) -> None:  # noqa: PLR0912 - one case per statement kind
        if isinstance(s, tir.SeqStmt):
            for x in s.seq:
                self.stmt(x)
        elif isinstance(s, tir.For):
            start, extent = self.expr(s.min), self.expr(s.extent)
            for v in range(start, start + extent):
                self.env[s.loop_var] = v
                self.stmt(s.body)
        elif isinstance(s, tir.BufferStore):
            index = self.flat(s.buffer, s.indices)
            self.memory[s.buffer.data][index] = self.expr(s.value)
        elif isinstance(s, tir.IfThenElse):
            if self.expr(s.condition):
                self.stmt(s.then_case)
            elif s.else_case is not None:
                self.stmt(s.else_case)
        elif isinstance(s, tir.LetStmt):
            self.env[s.var] = self.expr(s.value)
            self.stmt(s.body)
        elif isinstance(s, tir.Allocate):
            size = math.prod(self.expr(d) for d in s.buffer.shape)
            if s.buffer.data not in self.memory or self.memory[s.buffer.data].size < size:
                # Uninitialised memory: NaN (or a large int), so a read before a write shows.
                if tir.expr.is_float(s.buffer.dtype):
                    self.memory[s.buffer.data] = np.full(size, np.nan)
                else:
                    self.memory[s.buffer.data] = np.full(size, -(2**40), dtype=np.int64)
            self.stmt(s.body)
        elif isinstance(s, (tir.AttrStmt, tir.AssertStmt)):
            self.stmt(s.body)
        elif isinstance(s, tir.Evaluate):
            self.expr(s.value)
        else:
            raise NotImplementedError(type(s).__name__)


def _run_tir(
    func: tir.PrimFunc, arrays: Sequence[np.ndarray], scalars: dict[str, int] | None = None
) -> None:
    interp = _Interpreter()
    buffers = [func.buffer_map[p] for p in func.params if p in func.buffer_map]
    for buf, arr in zip(buffers, arrays, strict=True):
        interp.memory[buf.data] = arr.reshape(-1)
        for dim, size in zip(buf.shape, arr.shape, strict=True):
            if isinstance(dim, tir.Var):
                interp.env[dim] = size
    for p in func.params:
        if p not in func.buffer_map and scalars and p.name in scalars:
            interp.env[p] = scalars[p.name]
    interp.stmt(func.body)


@pytest.fixture
def run_tir() -> Callable[..., None]:
    """Interpret a ``PrimFunc`` on numpy arrays (see the module docstring)."""
    return _run_tir
