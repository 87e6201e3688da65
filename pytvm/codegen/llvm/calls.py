"""Calls out of a kernel in LLVM IR: packed functions, extern C functions, stack values.

The same ABI as the C path (``c/calls.py``): ``tvm_call_packed("f", args...)`` finds ``f`` once
per call site (an internal global handle, filled by the prelude's ``pytvm_call_packed`` through
``TVMBackendGetFuncFromEnv`` on ``__tvm_module_ctx``) and calls it with ``TVMValue`` values and
type codes built in the function's entry block; ``tvm_stack_make_array`` is a ``DLTensor`` and
``tvm_stack_make_shape`` an ``i64`` array there. A failing call stores -1 and leaves through the
cleanups, keeping the callee's last error. ``tvm_call_cpacked("f", ...)`` calls the linked
packed-signature C function ``f``; ``call_extern``/``call_pure_extern`` call the C function
``f``, declared from the argument and result types.
"""

from __future__ import annotations

from collections.abc import Callable

from llvmlite import ir  # type: ignore[import-untyped]

from ...ffi.errors import TVMValueError
from ...tir import expr as E
from ...tir.expr import is_float, lanes_of
from ..abi import CPU_DEVICE, EXTERNAL_CALL_OPS, dl_type_fields
from ..libc_names import C_MATH_FUNCTIONS
from .expr import ExprEmitter
from .helpers import Helpers
from .types import DLTENSOR, I8, I16, I32, I64, PTR, value_type

__all__ = ["CALL_OPS", "ExternCalls"]

_PACKED, _CPACKED = "tir.tvm_call_packed", "tir.tvm_call_cpacked"
_EXTERN = ("tir.call_extern", "tir.call_pure_extern")
_ARRAY, _SHAPE = "tir.tvm_stack_make_array", "tir.tvm_stack_make_shape"
#: The calls :class:`ExternCalls` emits.
CALL_OPS = EXTERNAL_CALL_OPS

# Type codes of packed arguments (pytvm/c_runtime_api.h).
_INT, _FLOAT, _HANDLE, _DLTENSOR, _STR = 1, 3, 4, 7, 8
_PACKED_TYPE = ir.FunctionType(I32, [PTR, PTR, I32, PTR, PTR, PTR])
# Fields of DLTensor, by index.
_DATA, _DEVICE, _NDIM, _DTYPE, _SHAPE_F, _STRIDES, _BYTE_OFFSET = range(7)


def _i32(value: int) -> ir.Constant:
    return ir.Constant(I32, value)


class ExternCalls:
    """Emits the calls out of one kernel.

    ``fail_unless(ok)`` goes on when the ``i1`` ``ok`` holds, else leaves the current function
    with -1; ``entry_alloca(type, align)`` is a slot in the current function's entry block;
    ``dev_id`` is the kernel's device id variable.
    """

    def __init__(
        self,
        module: ir.Module,
        helpers: Helpers,
        fail_unless: Callable[[ir.Value], None],
        entry_alloca: Callable[[ir.Type, int], ir.Value],
        dev_id: E.Var,
    ) -> None:
        self.module = module
        self.helpers = helpers
        self.fail_unless = fail_unless
        self.entry_alloca = entry_alloca
        self.dev_id = dev_id
        self._caches = 0

    def __call__(self, x: ExprEmitter, e: E.Call) -> ir.Value:
        """The value of call ``e`` (one of :data:`CALL_OPS`), emitted through ``x``."""
        if lanes_of(e.dtype) > 1:
            raise TVMValueError(f"the LLVM code generator cannot call {e.op} for {e.dtype}")
        if e.op in (_PACKED, _CPACKED):
            return self._packed(x, e)
        if e.op in _EXTERN:
            return self._extern(x, e)
        if e.op == _SHAPE:
            return self._shape(x, e.args)
        return self._array(x, e)

    # ------------------------------------------------------------------ packed calls

    def _packed(self, x: ExprEmitter, e: E.Call) -> ir.Value:
        b = x.builder
        name = _callee(e)
        args = e.args[1:]
        n = max(1, len(args))
        values = self.entry_alloca(ir.ArrayType(I64, n), 8)
        codes = self.entry_alloca(ir.ArrayType(I32, n), 4)
        ret = self.entry_alloca(I64, 8)
        ret_code = self.entry_alloca(I32, 4)
        for i, a in enumerate(args):
            code, value = self._packed_value(x, a)
            b.store(value, b.gep(values, [_i32(0), _i32(i)], source_etype=values.allocated_type))
            b.store(_i32(code), b.gep(codes, [_i32(0), _i32(i)], source_etype=codes.allocated_type))
        b.store(ir.Constant(I64, 0), ret)
        b.store(_i32(0), ret_code)
        count = _i32(len(args))
        if e.op == _CPACKED:
            fn = self._declare(name, _PACKED_TYPE)
            status = b.call(fn, [values, codes, count, ret, ret_code, ir.Constant(PTR, None)])
        else:
            cache = ir.GlobalVariable(self.module, PTR, name=f"pytvm.func.{name}.{self._caches}")
            self._caches += 1
            cache.linkage = "internal"
            cache.initializer = ir.Constant(PTR, None)
            text = self.helpers.string(name)
            call = self.helpers["pytvm_call_packed"]
            status = b.call(call, [cache, text, values, codes, count, ret, ret_code])
        self.fail_unless(b.icmp_signed("==", status, _i32(0)))
        if e.dtype == "handle":
            return b.load(ret, typ=PTR)
        if is_float(e.dtype):
            return x.cast(b.load(ret, typ=ir.DoubleType()), "float64", e.dtype)
        return x.cast(b.load(ret, typ=I64), "int64", e.dtype)

    def _packed_value(self, x: ExprEmitter, a: E.PrimExpr) -> tuple[int, ir.Value]:
        """The type code and the 8-byte value (``i64``, ``double`` or ``ptr``) of ``a``."""
        if isinstance(a, E.StringImm):
            return _STR, self.helpers.string(a.value)
        if isinstance(a, E.Call) and a.op == _ARRAY:
            return _DLTENSOR, self._array(x, a)
        if a.dtype == "handle":
            return _HANDLE, self._operand(x, a)
        if is_float(a.dtype):
            return _FLOAT, x.typed(a, "float64")
        return _INT, x.typed(a, "int64")

    def _operand(self, x: ExprEmitter, a: E.PrimExpr) -> ir.Value:
        if isinstance(a, E.StringImm):
            return self.helpers.string(a.value)
        if isinstance(a, E.IntImm) and a.dtype == "handle":
            return ir.Constant(PTR, None)
        return x(a)

    # ------------------------------------------------------------------ stack values

    def _shape(self, x: ExprEmitter, dims: tuple[E.PrimExpr, ...]) -> ir.Value:
        b = x.builder
        slots = self.entry_alloca(ir.ArrayType(I64, max(1, len(dims))), 8)
        for i, d in enumerate(dims):
            b.store(
                x.typed(d, "int64"),
                b.gep(slots, [_i32(0), _i32(i)], source_etype=slots.allocated_type),
            )
        return slots

    def _array(self, x: ExprEmitter, e: E.Call) -> ir.Value:
        if len(e.args) != 6:  # noqa: PLR2004 - the builtin's arity
            raise TVMValueError(f"tvm_stack_make_array takes 6 arguments, got {len(e.args)}")
        data, shape, strides, ndim, dtype, offset = e.args
        b = x.builder
        tensor = self.entry_alloca(DLTENSOR, 8)

        def field(*path: int) -> ir.Value:
            return b.gep(tensor, [_i32(0), *(_i32(p) for p in path)], source_etype=DLTENSOR)

        code, bits, lanes = dl_type_fields(dtype.dtype)
        b.store(self._operand(x, data), field(_DATA))
        b.store(_i32(CPU_DEVICE), field(_DEVICE, 0))
        b.store(x.typed(self.dev_id, "int32"), field(_DEVICE, 1))
        b.store(x.typed(ndim, "int32"), field(_NDIM))
        b.store(ir.Constant(I8, code), field(_DTYPE, 0))
        b.store(ir.Constant(I8, bits), field(_DTYPE, 1))
        b.store(ir.Constant(I16, lanes), field(_DTYPE, 2))
        b.store(self._pointer(x, shape), field(_SHAPE_F))
        b.store(self._pointer(x, strides), field(_STRIDES))
        elem_bytes = max(1, bits * lanes // 8)
        byte_offset = b.mul(x.typed(offset, "int64"), ir.Constant(I64, elem_bytes))
        b.store(byte_offset, field(_BYTE_OFFSET))
        return tensor

    def _pointer(self, x: ExprEmitter, e: E.PrimExpr) -> ir.Value:
        """A shape or strides argument: a ``tvm_stack_make_shape``, a handle, or 0 (null)."""
        if isinstance(e, E.Call) and e.op == _SHAPE:
            return self._shape(x, e.args)
        if isinstance(e, E.IntImm) and e.value == 0:
            return ir.Constant(PTR, None)
        return x(e)

    # ------------------------------------------------------------------ extern C functions

    def _extern(self, x: ExprEmitter, e: E.Call) -> ir.Value:
        name = _callee(e)
        args = e.args[1:]
        operands = [_libm_operand(x, name, a) or self._operand(x, a) for a in args]
        ret = ir.VoidType() if e.dtype == "void" else value_type(e.dtype)
        fn = self._declare(name, ir.FunctionType(ret, [v.type for v in operands]))
        return x.builder.call(fn, operands)

    def _declare(self, name: str, fnty: ir.FunctionType) -> ir.Function:
        existing = self.module.globals.get(name)
        if existing is None:
            return ir.Function(self.module, fnty, name=name)
        if not isinstance(existing, ir.Function) or existing.function_type != fnty:
            raise TVMValueError(
                f"the LLVM code generator calls {name} as {fnty}, but the module already has "
                f"{name} as {getattr(existing, 'function_type', existing.type)}"
            )
        return existing


def _libm_operand(x: ExprEmitter, name: str, a: E.PrimExpr) -> ir.Value | None:
    """A float argument of a ``libm`` function, converted to its parameter type (``double``;
    ``float`` for ``<name>f``) as C's prototype would; None for other arguments.
    """
    if not is_float(a.dtype):
        return None
    if name in C_MATH_FUNCTIONS:
        return x.typed(a, "float64")
    if name.endswith("f") and name[:-1] in C_MATH_FUNCTIONS:
        return x.typed(a, "float32")
    return None


def _callee(e: E.Call) -> str:
    if not e.args or not isinstance(e.args[0], E.StringImm):
        raise TVMValueError(f"{e.op}: the first argument must be the callee's name (a string)")
    name = e.args[0].value
    if e.op != _PACKED and (not name.isidentifier() or not name.isascii()):
        raise TVMValueError(f"{e.op}: {name!r} is not the name of a C function")
    return name
