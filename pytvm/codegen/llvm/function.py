"""LLVM functions for the body of one lowered ``PrimFunc``: loops, stores, allocations, closures.

As in the C path (``c/function.py``) the body becomes an internal function
``i32 <name>.compute(noalias ptr buffers..., scalars..., i32 dev_id)`` returning 0 or -1. A
parallel loop becomes a closure run by ``TVMBackendParallelLaunch``: its captured values go into
a struct on the caller's stack, the lambda ``i32 (i32 task_id, ptr penv, ptr cdata)`` unpacks
them and calls the loop's own function (with ``noalias`` pointers), which runs this task's
share of the range. Small constant local buffers live on the stack (allocated once, at the
function's entry); others are workspaces from ``TVMBackendAllocWorkspace``, freed on every path
out: a failure stores -1 and jumps to the innermost live workspace's release, which goes on
outward. A kernel that returns a value (``tir.ret``, see ``scalar_return``) also takes the packed
function's two return slots (``ptr``) and leaves the same way with the status 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from llvmlite import ir  # type: ignore[import-untyped]

from ...ffi.errors import TVMValueError
from ...tir import expr as E
from ...tir import stmt as S
from ...tir.expr import lanes_of, scalar_of
from ...tir.function import PrimFunc
from ..abi import STACK_LIMIT_BYTES, compute_params, dl_type_fields
from ..closure_vars import parallel_captures
from ..scalar_return import FLOAT_CODE, RETURNED, has_return, return_type_code, return_value
from .calls import ExternCalls
from .expr import ExprEmitter, lane_of, unit_ramp_base
from .helpers import Helpers
from .intrinsics import MathCalls
from .loop_hints import LoopHint, loop_hints
from .types import I32, I64, PTR, alloca, const_int, element_bytes, memory_type, value_type

__all__ = ["FunctionEmitter", "llvm_type_of"]

_PARALLEL_ENV = ir.LiteralStructType([PTR, I32])
#: A call made on a failing path: the callee and its arguments.
_Call = tuple[Any, list[Any]]


def llvm_type_of(var: E.Var) -> ir.Type:
    """The LLVM type of a variable (a pointer for a handle)."""
    return PTR if var.dtype == "handle" else value_type(var.dtype)


@dataclass
class _Frame:
    """One LLVM function being written: its builder, return code and cleanup targets."""

    fn: ir.Function
    builder: ir.IRBuilder
    expr: ExprEmitter
    rc: ir.Value
    entry: ir.Block
    end: ir.Block
    cleanups: list[ir.Block] = field(default_factory=list)


class FunctionEmitter:
    """Writes the LLVM functions of one PrimFunc (its body function and parallel closures)."""

    def __init__(
        self, module: ir.Module, helpers: Helpers, math: MathCalls, func: PrimFunc, name: str
    ) -> None:
        self.module = module
        self.helpers = helpers
        self.math = math
        self.func = func
        self.name = name
        self.dev_id = E.Var("dev_id", "int32")
        self._closures = 0
        self.frame: _Frame
        self.calls = ExternCalls(
            module,
            helpers,
            lambda ok: self._fail_unless(ok, []),
            self._entry_alloca,
            self.dev_id,
        )

    # ------------------------------------------------------------------ frames

    def _open(self, fn: ir.Function) -> _Frame:
        fn.attributes.add("nounwind")
        entry, body, end = (fn.append_basic_block(n) for n in ("entry", "body", "end"))
        builder = ir.IRBuilder(entry)
        rc = alloca(builder, I32)
        builder.store(ir.Constant(I32, 0), rc)
        builder.branch(body)
        builder.position_at_end(end)
        builder.ret(builder.load(rc))
        builder.position_at_end(body)
        expr = ExprEmitter(builder, self.math)
        expr.calls = self.calls
        return _Frame(fn, builder, expr, rc, entry, end)

    def _close(self, frame: _Frame) -> None:
        frame.builder.branch(frame.end)

    @property
    def _b(self) -> ir.IRBuilder:
        return self.frame.builder

    def _fail_unless(self, ok: ir.Value, before_failing: list[_Call]) -> None:
        """Continue when ``ok``; otherwise make the calls, store -1 and leave for the cleanup."""
        fn = self.frame.fn
        fail, cont = fn.append_basic_block("fail"), fn.append_basic_block("ok")
        self._b.cbranch(ok, cont, fail)
        self._b.position_at_end(fail)
        for callee, args in before_failing:
            self._b.call(callee, args)
        self._b.store(ir.Constant(I32, -1), self.frame.rc)
        self._b.branch(self.frame.cleanups[-1] if self.frame.cleanups else self.frame.end)
        self._b.position_at_end(cont)

    def _leave_unless(self, ok: ir.Value) -> None:
        """Continue when ``ok``; otherwise leave for the cleanup, keeping the status."""
        fn = self.frame.fn
        cont = fn.append_basic_block("ok")
        target = self.frame.cleanups[-1] if self.frame.cleanups else self.frame.end
        self._b.cbranch(ok, cont, target)
        self._b.position_at_end(cont)

    def _entry_alloca(self, ty: ir.Type, align: int) -> ir.Value:
        entry = ir.IRBuilder(self.frame.entry)
        entry.position_before(self.frame.entry.terminator)
        return alloca(entry, ty, align)

    # ------------------------------------------------------------------ entry

    def emit(self) -> ir.Function:
        """The body function (its closures are added to the module as they are met)."""
        pointers, scalars = compute_params(self.func)
        params = [*pointers, *scalars, self.dev_id]
        slots = [PTR, PTR] if has_return(self.func.body) else []
        fnty = ir.FunctionType(I32, [*(llvm_type_of(v) for v in params), *slots])
        fn = ir.Function(self.module, fnty, name=f"{self.name}.compute")
        fn.linkage = "internal"
        self.frame = self._open(fn)
        for var, arg in zip(params, fn.args, strict=False):
            if var.dtype == "handle":
                arg.add_attribute("noalias")
            self.frame.expr.bind(var, arg)
        self.stmt(self.func.body)
        self._close(self.frame)
        return fn

    # ------------------------------------------------------------------ statements

    def stmt(self, s: S.Stmt) -> None:  # noqa: PLR0912 - one case per statement kind
        """Write the code of statement ``s`` at the current position."""
        expr = self.frame.expr
        if isinstance(s, S.SeqStmt):
            for item in s.seq:
                self.stmt(item)
        elif isinstance(s, S.For):
            if s.kind is S.ForKind.PARALLEL:
                self._parallel(s)
            else:
                lo, extent = (expr.typed(x, s.loop_var.dtype) for x in (s.min, s.extent))
                self._loop(s.loop_var, lo, extent, s.body, loop_hints(s.annotations))
        elif isinstance(s, S.BufferStore):
            self._store(s)
        elif isinstance(s, S.Allocate):
            self._allocate(s)
        elif isinstance(s, S.IfThenElse):
            self._if(s)
        elif isinstance(s, S.LetStmt):
            expr.bind(s.var, expr(s.value))
            self.stmt(s.body)
        elif isinstance(s, S.AttrStmt):
            self.stmt(s.body)
        elif isinstance(s, S.AssertStmt):
            message = f"RuntimeError: {self.name}: {s.message}".replace('"', "'")
            set_error = (self.helpers["pytvm_set_error"], [self.helpers.string(message)])
            self._fail_unless(expr.truth(s.condition), [set_error])
            self.stmt(s.body)
        elif isinstance(s, S.Evaluate):
            value = return_value(s)
            if value is not None:
                self._return(value)
            elif not isinstance(s.value, (E.IntImm, E.FloatImm)):
                expr(s.value)
        else:
            raise TVMValueError(f"the LLVM code generator cannot emit {type(s).__name__}")

    def _return(self, value: E.PrimExpr) -> None:
        """``tir.ret(value)``: the value and its type code into the return slots (the body
        function's last two arguments), then leave with the status RETURNED through every live
        cleanup; code after it goes into a block nothing reaches.
        """
        code = return_type_code(value.dtype, self.name)
        b, expr = self._b, self.frame.expr
        slot, tcode = self.frame.fn.args[-2], self.frame.fn.args[-1]
        raw = expr(value)
        if code == FLOAT_CODE:
            b.store(expr.cast(raw, value.dtype, "float64"), slot)
        elif value.dtype == "bool":
            b.store(b.zext(raw, I64), slot)
        else:
            b.store(expr.cast(raw, value.dtype, "int64"), slot)
        b.store(_i32(code), tcode)
        b.store(_i32(RETURNED), self.frame.rc)
        b.branch(self.frame.cleanups[-1] if self.frame.cleanups else self.frame.end)
        b.position_at_end(self.frame.fn.append_basic_block("after.ret"))

    def _loop(
        self,
        var: E.Var,
        lo: ir.Value,
        extent: ir.Value,
        body: S.Stmt,
        hints: Sequence[LoopHint] = (),
    ) -> None:
        """``for (var = lo; var < lo + extent; ++var) body``; ``hints`` become the loop's
        ``llvm.loop`` metadata.
        """
        b = self._b
        flags = ("nsw",)
        end = extent if _is_zero(lo) else b.add(lo, extent, flags=flags)
        before = b.block
        fn = self.frame.fn
        head, loop_body, done = (fn.append_basic_block(n) for n in ("for", "for.body", "for.end"))
        b.branch(head)
        b.position_at_end(head)
        index = b.phi(lo.type, name=var.name)
        b.cbranch(b.icmp_signed("<", index, end), loop_body, done)
        b.position_at_end(loop_body)
        self.frame.expr.bind(var, index)
        self.stmt(body)
        step = b.add(index, ir.Constant(lo.type, 1), flags=flags)
        index.add_incoming(lo, before)
        index.add_incoming(step, b.block)
        back_edge = b.branch(head)
        if hints:
            back_edge.set_metadata("llvm.loop", self._loop_id(hints))
        b.position_at_end(done)

    def _loop_id(self, hints: Sequence[LoopHint]) -> ir.values.MDValue:
        """A new self-referential loop ID carrying ``hints`` (LLVM's loop metadata form)."""
        module = self.frame.fn.module
        options = [
            module.add_metadata(
                [ir.MetaDataString(module, key), *(ir.Constant(ir.IntType(1), v) for v in value)]
            )
            for key, *value in hints
        ]
        loop_id = ir.values.MDValue(module, (), name=str(len(module.metadata)))
        loop_id.operands = (loop_id, *options)
        return loop_id

    def _if(self, s: S.IfThenElse) -> None:
        b = self._b
        fn = self.frame.fn
        cond = self.frame.expr.truth(s.condition)
        then_bb, merge = fn.append_basic_block("if.then"), fn.append_basic_block("if.end")
        else_bb = fn.append_basic_block("if.else") if s.else_case is not None else merge
        b.cbranch(cond, then_bb, else_bb)
        b.position_at_end(then_bb)
        self.stmt(s.then_case)
        b.branch(merge)
        if s.else_case is not None:
            b.position_at_end(else_bb)
            self.stmt(s.else_case)
            b.branch(merge)
        b.position_at_end(merge)

    def _store(self, s: S.BufferStore) -> None:
        (index,) = s.indices
        expr = self.frame.expr
        value = expr(s.value)
        dtype = s.value.dtype
        if scalar_of(dtype) == "bool":
            value = self._b.zext(value, memory_type(dtype))
        align = element_bytes(dtype)
        base = unit_ramp_base(index) if lanes_of(dtype) > 1 else index
        if base is not None:
            self._b.store(value, expr.address(s.buffer, expr(base)), align=align)
            return
        for lane in range(lanes_of(dtype)):
            at = expr(lane_of(index, lane, expr.vector_lane))
            part = self._b.extract_element(value, ir.Constant(I32, lane))
            self._b.store(part, expr.address(s.buffer, at), align=align)

    def _allocate(self, s: S.Allocate) -> None:
        buf = s.buffer
        expr = self.frame.expr
        elem = memory_type(scalar_of(buf.dtype))
        count, symbolic = 1, []
        for dim in buf.shape:
            if isinstance(dim, E.IntImm):
                count *= dim.value
            else:
                symbolic.append(dim)
        nbytes_const = count * element_bytes(buf.dtype)
        if not symbolic and buf.scope == "local" and nbytes_const <= STACK_LIMIT_BYTES:
            slot = self._entry_alloca(ir.ArrayType(elem, max(1, count)), 64)
            expr.bind(buf.data, slot)
            self.stmt(s.body)
            return
        b = self._b
        nbytes: ir.Value = ir.Constant(I64, nbytes_const)
        for dim in symbolic:
            nbytes = b.mul(nbytes, expr.cast(expr(dim), dim.dtype, "int64"))
        code, bits, _ = dl_type_fields(buf.dtype)
        dev = expr(self.dev_id)
        alloc = self.helpers["pytvm_ws_alloc"]
        ptr = b.call(alloc, [dev, nbytes, ir.Constant(I32, code), ir.Constant(I32, bits)])
        where = self.helpers.string(self.name)
        error = (
            self.helpers["pytvm_value_error"],
            [
                self.helpers.string("MemoryError"),
                where,
                self.helpers.string(": cannot allocate a workspace of "),
                nbytes,
                self.helpers.string(" bytes"),
            ],
        )
        self._fail_unless(b.icmp_unsigned("!=", ptr, ir.Constant(PTR, None)), [error])
        release = self.frame.fn.append_basic_block("free")
        self.frame.cleanups.append(release)
        expr.bind(buf.data, ptr)
        self.stmt(s.body)
        self.frame.cleanups.pop()
        b.branch(release)
        b.position_at_end(release)
        freed = b.call(self.helpers["pytvm_ws_free"], [dev, ptr])
        rc = b.load(self.frame.rc)
        bad_free = b.and_(
            b.icmp_signed("!=", freed, ir.Constant(I32, 0)),
            b.icmp_signed(">=", rc, ir.Constant(I32, 0)),
        )
        rc = b.select(bad_free, ir.Constant(I32, -1), rc)
        b.store(rc, self.frame.rc)
        self._leave_unless(b.icmp_signed("==", rc, ir.Constant(I32, 0)))

    # ------------------------------------------------------------------ parallel loops

    def _parallel(self, s: S.For) -> None:
        captured = parallel_captures(self.name, s, self.dev_id)
        self._closures += 1
        prefix = f"{self.name}.parallel{self._closures}"
        types = [llvm_type_of(v) for v in captured]
        struct = ir.LiteralStructType(types or [I32])
        # The loop's own function: this task's share of the range.
        body_fn = ir.Function(
            self.module, ir.FunctionType(I32, [I32, I32, *types]), name=f"{prefix}.body"
        )
        body_fn.linkage = "internal"
        outer = self.frame
        self.frame = self._open(body_fn)
        task_id, num_task, *values = body_fn.args
        for var, arg in zip(captured, values, strict=True):
            if var.dtype == "handle":
                arg.add_attribute("noalias")
            self.frame.expr.bind(var, arg)
        b, expr = self._b, self.frame.expr
        ty = value_type(s.loop_var.dtype)
        total = expr.typed(s.extent, s.loop_var.dtype)
        tasks = b.sext(num_task, ty) if ty != I32 else num_task
        chunk = b.sdiv(b.sub(b.add(total, tasks), const_int(ty, 1)), tasks)
        begin = b.mul(b.sext(task_id, ty) if ty != I32 else task_id, chunk)
        stop = b.add(begin, chunk)
        stop = b.select(b.icmp_signed("<", stop, total), stop, total)
        # The runtime hands out task ids in [0, num_task): this share lies within the range.
        # Said to LLVM, the loop variable's bounds are known and its index arithmetic folds.
        zero = const_int(ty, 0)
        self.math.assume(b, b.icmp_signed(">=", begin, zero))
        self.math.assume(b, b.icmp_signed("<=", stop, total))
        lo = expr.typed(s.min, s.loop_var.dtype)
        start = begin if _is_zero(lo) else b.add(lo, begin)
        self._loop(s.loop_var, start, b.sub(stop, begin), s.body)
        self._close(self.frame)
        # The lambda TVMBackendParallelLaunch calls.
        lam = ir.Function(self.module, ir.FunctionType(I32, [I32, PTR, PTR]), name=prefix)
        lam.linkage = "internal"
        lam.attributes.add("nounwind")
        lb = ir.IRBuilder(lam.append_basic_block("entry"))
        task, penv, cdata = lam.args
        count = lb.load(lb.gep(penv, [_i32(0), _i32(1)], source_etype=_PARALLEL_ENV), typ=I32)
        fields = [
            lb.load(lb.gep(cdata, [_i32(0), _i32(k)], source_etype=struct), typ=t)
            for k, t in enumerate(types)
        ]
        lb.ret(lb.call(body_fn, [task, count, *fields]))
        # The launch, in the enclosing function.
        self.frame = outer
        closure = self._entry_alloca(struct, 8)
        for k, var in enumerate(captured):
            slot = self._b.gep(closure, [_i32(0), _i32(k)], source_etype=struct)
            self._b.store(outer.expr(var), slot)
        rc = self._b.call(self.helpers["pytvm_parallel"], [lam, closure])
        self._fail_unless(self._b.icmp_signed("==", rc, ir.Constant(I32, 0)), [])


def _i32(value: int) -> ir.Constant:
    return ir.Constant(I32, value)


def _is_zero(value: ir.Value) -> bool:
    return isinstance(value, ir.Constant) and value.constant == 0
