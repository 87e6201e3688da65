"""The exported packed function of a kernel in LLVM IR, and its ``__tvm_ffi_`` adapter.

The same checks, in the same order and with the same messages, as the C path's
``c/packed.py``: the argument count; each argument's type index (an array for a buffer, an
int or float for a scalar), then for an array its ndim, dtype and device type; symbolic
dimensions bound from their first array; every array's shape and compact strides. A failed
check sets the last error through the prelude's builders and returns -1. A kernel that returns
a value passes the return slots on to its body function (``scalar_return``).
"""

from __future__ import annotations

from collections.abc import Callable

from llvmlite import ir  # type: ignore[import-untyped]

from ...tir import expr as E
from ...tir.function import PrimFunc
from ..abi import (
    CPU_DEVICE,
    ENTRY_SYMBOL,
    MSG_ARGUMENTS,
    MSG_NOT_COMPACT,
    MSG_NOT_COMPACT_GOT,
    TVM_FFI_ENTRY_SYMBOL,
    compute_params,
    dl_type_fields,
    tvm_ffi_symbol,
)
from ..scalar_return import RETURNED, has_return
from .arg_checks import device_mask, dtype_word
from .expr import ExprEmitter
from .helpers import Helpers
from .intrinsics import MathCalls
from .types import DLTENSOR, I1, I8, I32, I64, PTR, alloca

__all__ = ["emit_entry_functions", "emit_packed_function", "emit_tvm_ffi_adapter"]

_TVM_ARG_INT, _TVM_ARG_BOOL, _TVM_ARG_FLOAT = 1, 2, 3
_PACKED_TYPE = ir.FunctionType(I32, [PTR, PTR, I32, PTR, PTR, PTR])
# Fields of DLTensor, by index.
_DATA, _DEVICE, _NDIM, _DTYPE, _SHAPE, _STRIDES, _BYTE_OFFSET = range(7)


def _i32(value: int) -> ir.Constant:
    return ir.Constant(I32, value)


class _Checks:
    """A function being written, and a way out for each failed check."""

    def __init__(self, fn: ir.Function, helpers: Helpers) -> None:
        self.fn = fn
        self.helpers = helpers
        self.b = ir.IRBuilder(fn.append_basic_block("entry"))

    def check(self, ok: ir.Value, helper: str, args: Callable[[], list[ir.Value]]) -> None:
        """Go on when ``ok``; else return what ``helper(*args())`` returns (-1, error set);
        ``args`` emits its values on the failing branch only.
        """
        fail, cont = self.fn.append_basic_block("bad"), self.fn.append_basic_block("next")
        self.b.cbranch(ok, cont, fail)
        self.b.position_at_end(fail)
        self.b.ret(self.b.call(self.helpers[helper], args()))
        self.b.position_at_end(cont)

    def propagate(self, status: ir.Value) -> None:
        """Go on when the i32 ``status`` of a check call is 0; else return it."""
        fail, cont = self.fn.append_basic_block("bad"), self.fn.append_basic_block("next")
        self.b.cbranch(self.b.icmp_signed("==", status, _i32(0)), cont, fail)
        self.b.position_at_end(fail)
        self.b.ret(status)
        self.b.position_at_end(cont)

    def count(self, got: ir.Value, expected: int, where: str, what: str) -> None:
        """Check an i32 count (of arguments, of dimensions) against ``expected``."""
        s, b = self.helpers.string, self.b
        self.check(
            b.icmp_signed("==", got, _i32(expected)),
            "pytvm_count_error",
            lambda: [s(where), ir.Constant(I64, expected), b.sext(got, I64), s(what)],
        )

    def field(self, tensor: ir.Value, *path: int, ty: ir.Type) -> ir.Value:
        """A field of a ``DLTensor`` (``path``: indices into the struct)."""
        indices = [_i32(0), *(_i32(p) for p in path)]
        return self.b.load(self.b.gep(tensor, indices, source_etype=DLTENSOR), typ=ty)


class _PackedFunction(_Checks):
    """The packed function of one kernel, written check after check."""

    def __init__(self, fn: ir.Function, helpers: Helpers, math: MathCalls, name: str) -> None:
        super().__init__(fn, helpers)
        self.name = name
        self.expr = ExprEmitter(self.b, math)
        self.arrays: list[tuple[E.Buffer, ir.Value, str]] = []

    def scalar(self, param: E.Var, code: ir.Value, slot: ir.Value, where: str) -> None:
        """Check a scalar argument's type index and bind ``param`` to its value."""
        b, s = self.b, self.helpers.string
        is_float = param.dtype.startswith("float")
        if is_float:
            ok = b.icmp_signed("==", code, _i32(_TVM_ARG_FLOAT))
        else:
            ok = b.or_(
                b.icmp_signed("==", code, _i32(_TVM_ARG_INT)),
                b.icmp_signed("==", code, _i32(_TVM_ARG_BOOL)),
            )
        expect = "a float" if is_float else "an int"
        self.check(
            ok,
            "pytvm_arg_error",
            lambda: [
                s("TypeError"),
                s(where),
                s(f": expected {expect}, got "),
                b.call(self.helpers["pytvm_type_name"], [code]),
            ],
        )
        raw = b.load(slot, typ=ir.DoubleType() if is_float else I64)
        if param.dtype == "bool":  # the C path's int8_t, then any non-zero byte is true
            value = self.expr.cast(self.expr.cast(raw, "int64", "int8"), "int8", "bool")
        else:
            value = self.expr.cast(raw, "float64" if is_float else "int64", param.dtype)
        self.expr.bind(param, value)

    def array(self, buffer: E.Buffer, index: int, where: str, devices: tuple[int, ...]) -> None:
        """Check an array argument's type index, ndim, dtype and device (the library's
        ``pytvm_check_array``).
        """
        b, s = self.b, self.helpers.string
        args, codes = self.fn.args[0], self.fn.args[1]
        status = b.call(
            self.helpers["pytvm_check_array"],
            [
                args,
                codes,
                _i32(index),
                s(where),
                _i32(buffer.ndim),
                _i32(dtype_word(*dl_type_fields(buffer.dtype))),
                s(buffer.dtype),
                ir.Constant(I64, device_mask(devices)),
            ],
        )
        self.propagate(status)
        handle = b.load(b.gep(args, [_i32(index)], source_etype=I64), typ=PTR)
        self.arrays.append((buffer, handle, where))

    def shapes(self) -> None:
        """Bind symbolic dimensions from their first array, then check every shape."""
        b, s = self.b, self.helpers.string
        shapes = [self.field(handle, _SHAPE, ty=PTR) for _, handle, _ in self.arrays]
        for (buffer, _, _), shape in zip(self.arrays, shapes, strict=True):
            for axis, dim in enumerate(buffer.shape):
                if isinstance(dim, E.Var) and id(dim) not in self.expr.values:
                    extent = b.load(b.gep(shape, [_i32(axis)], source_etype=I64), typ=I64)
                    self.expr.bind(dim, self.expr.cast(extent, "int64", dim.dtype))
        entry = ir.IRBuilder(self.fn.entry_basic_block)
        for (buffer, handle, where), shape in zip(self.arrays, shapes, strict=True):
            if buffer.ndim == 0:
                continue
            static = [d.value for d in buffer.shape if isinstance(d, E.IntImm)]
            if len(static) == buffer.ndim:  # the library's check against a constant table
                table = self.helpers.i64_table(tuple(static))
                check = self.helpers["pytvm_check_shape"]
                self.propagate(b.call(check, [handle, s(where), table, _i32(buffer.ndim)]))
                continue
            expected = [self.expr.cast(self.expr(d), d.dtype, "int64") for d in buffer.shape]
            agree: ir.Value = ir.Constant(I1, 1)
            entry.position_at_start(self.fn.entry_basic_block)
            table = alloca(entry, ir.ArrayType(I64, buffer.ndim))
            for axis, want in enumerate(expected):
                got = b.load(b.gep(shape, [_i32(axis)], source_etype=I64), typ=I64)
                agree = b.and_(agree, b.icmp_signed("==", got, want))
                b.store(want, b.gep(table, [_i32(axis)], source_etype=I64))
            ndim = _i32(buffer.ndim)
            self.check(agree, "pytvm_shape_error", lambda: [s(where), table, shape, ndim])
            strides = self.field(handle, _STRIDES, ty=PTR)
            compact = b.call(self.helpers["pytvm_is_compact"], [shape, strides, ndim])
            self.check(
                b.icmp_signed("!=", compact, _i32(0)),
                "pytvm_arg_error",
                lambda: [
                    s("ValueError"),
                    s(where),
                    s(MSG_NOT_COMPACT),
                    s(MSG_NOT_COMPACT_GOT),
                ],
            )

    def call(
        self, func: PrimFunc, compute: ir.Function, out_value: ir.Value, out_tcode: ir.Value
    ) -> None:
        """Call the body function with data pointers, scalars and the first array's device
        (and the return slots, when the kernel returns a value: its status RETURNED is 0 here).
        """
        b = self.b
        pointers, scalars = compute_params(func)
        by_data = {id(buffer.data): handle for buffer, handle, _ in self.arrays}
        args: list[ir.Value] = []
        for var in pointers:
            handle = by_data[id(var)]
            data = self.field(handle, _DATA, ty=PTR)
            offset = self.field(handle, _BYTE_OFFSET, ty=I64)
            args.append(b.gep(data, [offset], source_etype=I8))
        args += [self.expr(v) for v in scalars]
        dev = self.field(self.arrays[0][1], _DEVICE, 1, ty=I32) if self.arrays else _i32(0)
        b.store(_i32(0), out_tcode)
        if not has_return(func.body):
            b.ret(b.call(compute, [*args, dev]))
            return
        status = b.call(compute, [*args, dev, out_value, out_tcode])
        returned = b.icmp_signed("==", status, _i32(RETURNED))
        b.ret(b.select(returned, _i32(0), status))


def emit_packed_function(
    module: ir.Module,
    helpers: Helpers,
    math: MathCalls,
    func: PrimFunc,
    name: str,
    symbol: str,
    compute: ir.Function,
    device_types: tuple[int, ...] = (CPU_DEVICE,),
) -> ir.Function:
    """The exported packed function ``symbol`` that checks its arguments and calls ``compute``;
    messages name the kernel ``name``.
    """
    fn = ir.Function(module, _PACKED_TYPE, name=symbol)
    fn.attributes.add("nounwind")
    packed = _PackedFunction(fn, helpers, math, name)
    args, codes, num_args, out_value, out_tcode, _ = fn.args
    packed.count(num_args, len(func.params), name, MSG_ARGUMENTS)
    b = packed.b
    for index, param in enumerate(func.params):
        buffer = func.buffer_map.get(param)
        where = f"{name}: argument {buffer.name if buffer is not None else param.name}"
        if buffer is None:
            code = b.load(b.gep(codes, [_i32(index)], source_etype=I32), typ=I32)
            slot = b.gep(args, [_i32(index)], source_etype=I64)
            packed.scalar(param, code, slot, where)
        else:
            packed.array(buffer, index, where, device_types)
    packed.shapes()
    packed.call(func, compute, out_value, out_tcode)
    return fn


def emit_tvm_ffi_adapter(
    module: ir.Module, helpers: Helpers, name: str, packed: ir.Function, num_params: int
) -> ir.Function:
    """``__tvm_ffi_<name>``: tvm-ffi's safe call over the packed function (see
    ``c/tvm_ffi_export.py``), one call of the library's ``pytvm_ffi_call``.
    """
    fn = ir.Function(module, ir.FunctionType(I32, [PTR, PTR, I32, PTR]), tvm_ffi_symbol(name))
    fn.attributes.add("nounwind")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    _, args, num_args, result = fn.args
    call = helpers["pytvm_ffi_call"]
    b.ret(b.call(call, [packed, args, num_args, result, _i32(num_params), helpers.string(name)]))
    return fn


def emit_entry_functions(module: ir.Module, packed: ir.Function, adapter: ir.Function) -> None:
    """The library's entry functions calling one kernel: ``__tvm_main__`` over its packed
    function ``packed`` and ``__tvm_ffi_main`` over its adapter ``adapter``; weak, as the C
    path's (``c/tvm_ffi_export.py``, ``entry_functions_c``).
    """
    for name, callee in ((ENTRY_SYMBOL, packed), (TVM_FFI_ENTRY_SYMBOL, adapter)):
        fn = ir.Function(module, callee.function_type, name)
        fn.linkage = "weak"
        fn.attributes.add("nounwind")
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        b.ret(b.call(callee, list(fn.args), tail=True))
