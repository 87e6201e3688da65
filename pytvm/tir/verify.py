"""``tir.verify``: checks that a kernel is well formed, run after every pass in debug mode.

Checked: every used variable is defined (a parameter, a shape or stride variable of a
parameter buffer, a loop or let variable, the data of a parameter buffer or an allocation); no
loop variable is rebound inside its own loop; buffer accesses have one index per dimension;
stored values have the buffer's type (with the index's lanes); vector lanes agree; and, once
flattened (``attrs["tir.flattened"]``), every buffer accessed in the body is 1-D.
"""

from __future__ import annotations

from typing import Any

from ..ffi.errors import TVMValueError
from . import expr as E
from . import stmt as S
from .expr import Buffer, PrimExpr, Var, is_int, lanes_of, with_lanes
from .function import IRModule, PrimFunc, set_verify_hook
from .functor import IRVisitor

__all__ = ["verify"]


class _Problem(Exception):
    pass


class _Checker(IRVisitor):
    def __init__(self, func: PrimFunc) -> None:
        self.defined: dict[Var, int] = {}
        self.loops: set[Var] = set()
        self.flat = bool(func.attrs.get("tir.flattened", False))
        for p in func.params:
            self._define(p)
        for buf in func.buffer_map.values():
            self._define(buf.data)
            for dim in (*buf.shape, *buf.strides):
                if isinstance(dim, Var) and dim not in self.defined:
                    self._define(dim)  # bound from the argument's shape
                self.visit(dim)

    def _define(self, v: Var) -> None:
        self.defined[v] = self.defined.get(v, 0) + 1

    def _undefine(self, v: Var) -> None:
        self.defined[v] -= 1
        if not self.defined[v]:
            del self.defined[v]

    # -------------------------------------------------------------- scopes

    def visit_For(self, node: S.For) -> None:
        self.visit(node.min)
        self.visit(node.extent)
        if node.loop_var in self.loops:
            raise _Problem(f"loop variable {node.loop_var.name} is bound again inside its own loop")
        self.loops.add(node.loop_var)
        self._define(node.loop_var)
        self.visit(node.body)
        self._undefine(node.loop_var)
        self.loops.discard(node.loop_var)

    def visit_LetStmt(self, node: S.LetStmt) -> None:
        self.visit(node.value)
        self._define(node.var)
        self.visit(node.body)
        self._undefine(node.var)

    def visit_Let(self, node: E.Let) -> None:
        self.visit(node.value)
        self._define(node.var)
        self.visit(node.body)
        self._undefine(node.var)

    def visit_Allocate(self, node: S.Allocate) -> None:
        for dim in node.buffer.shape:
            self.visit(dim)
        self._define(node.buffer.data)
        self.visit(node.body)
        self._undefine(node.buffer.data)

    # -------------------------------------------------------------- uses

    def visit_Var(self, node: Var) -> None:
        if node not in self.defined:
            raise _Problem(
                f"variable {node.name} ({node.dtype}) is used but not defined (not a parameter, "
                "a loop or let variable, or the data of a parameter buffer or an allocation)"
            )

    def _access(self, buf: Buffer, indices: tuple[PrimExpr, ...], what: str) -> int:
        self.visit_Var(buf.data)
        if len(indices) != buf.ndim:
            raise _Problem(
                f"{what} of {buf.name} has {len(indices)} indices for a {buf.ndim}-d buffer"
            )
        if self.flat and buf.ndim != 1:
            raise _Problem(f"{what} of {buf.name}: buffer is {buf.ndim}-d after flattening")
        for i in indices:
            if not is_int(i.dtype):
                raise _Problem(f"{what} of {buf.name} has an index of type {i.dtype}: {i}")
        lanes = {lanes_of(i.dtype) for i in indices}
        if len(lanes - {1}) > 1:
            raise _Problem(f"{what} of {buf.name}: indices of different vector lanes {lanes}")
        for i in indices:
            self.visit(i)
        return max(lanes, default=1)

    def visit_BufferLoad(self, node: E.BufferLoad) -> None:
        lanes = self._access(node.buffer, node.indices, "load")
        if node.dtype != with_lanes(node.buffer.dtype, lanes):
            raise _Problem(f"load of {node.buffer.name} has type {node.dtype}")

    def visit_BufferStore(self, node: S.BufferStore) -> None:
        lanes = self._access(node.buffer, node.indices, "store")
        expected = with_lanes(node.buffer.dtype, lanes)
        if node.value.dtype != expected:
            raise _Problem(
                f"store to {node.buffer.name}: value of type {node.value.dtype}, expected "
                f"{expected}"
            )
        self.visit(node.value)

    def visit_Ramp(self, node: E.Ramp) -> None:
        if lanes_of(node.base.dtype) != 1 or lanes_of(node.stride.dtype) != 1:
            raise _Problem(f"ramp {node} has a vector base or stride")
        self.generic_visit(node)

    def visit_Select(self, node: E.Select) -> None:
        cond_lanes = lanes_of(node.condition.dtype)
        if cond_lanes not in (1, lanes_of(node.dtype)):
            raise _Problem(f"select {node}: condition of {cond_lanes} lanes for a {node.dtype}")
        self.generic_visit(node)

    def visit_ProducerLoad(self, node: E.ProducerLoad) -> None:
        raise _Problem(f"tensor load {node} left after lowering (not a buffer load)")

    def visit_Reduce(self, node: E.Reduce) -> None:
        raise _Problem("a te reduction is left in the loop IR")


def _check(func: PrimFunc, stage: str) -> None:
    try:
        _Checker(func).visit(func.body)
    except _Problem as problem:
        after = f" (after pass {stage})" if stage else ""
        raise TVMValueError(
            f"tir.verify: function {func.name}: {problem}{after}; the IR is malformed"
        ) from None


def verify(func_or_mod: PrimFunc | IRModule | Any, stage: str = "") -> None:
    """Check that a ``PrimFunc`` (or every function of an ``IRModule``) is well formed.

    Parameters
    ----------
    func_or_mod
        The function or module to check.
    stage
        The pass that produced it, named in the error.

    Raises
    ------
    TVMValueError
        Naming the function, the problem and the pass.

    Examples
    --------
    >>> from pytvm import tir
    >>> from pytvm.tir.verify import verify
    >>> A = tir.decl_buffer((4,), "float32", "A")
    >>> i, j = tir.Var("i"), tir.Var("j")
    >>> body = tir.For(i, tir.const(0), tir.const(4), tir.ForKind.SERIAL,
    ...                tir.BufferStore(A, tir.const(0.0), (j,)))
    >>> func = tir.PrimFunc((A.data,), body, {A.data: A}, {"global_symbol": "f"})
    >>> verify(func, stage="my_pass")
    Traceback (most recent call last):
      ...
    pytvm.ffi.errors.TVMValueError: tir.verify: function f: variable j (int32) is used but ...
    """
    if isinstance(func_or_mod, IRModule):
        for func in func_or_mod.functions.values():
            _check(func, stage)
        return
    if not isinstance(func_or_mod, PrimFunc):
        raise TVMValueError(
            f"tir.verify: expected a PrimFunc or an IRModule, got {type(func_or_mod).__name__}"
        )
    _check(func_or_mod, stage)


set_verify_hook(verify)
