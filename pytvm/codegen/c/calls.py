"""C for calls out of a kernel: packed functions, extern C functions, and the values TVM builds
on the stack for them.

``tvm_call_packed("f", args...)`` looks ``f`` up once per call site (a function-level static
handle, filled by ``pytvm_call_packed`` through ``TVMBackendGetFuncFromEnv`` on the module's
context ``__tvm_module_ctx``: the module's functions, its imports, then the global registry)
and calls it through ``TVMFuncCall`` with ``TVMValue`` values and type codes: a handle as an
opaque handle, an integer as an int, a float as a float, a string as a string, a
``tvm_stack_make_array`` as a ``DLTensor*`` built on the stack (data, shape, strides, ndim,
dtype, byte offset; on the kernel's device) and a ``tvm_stack_make_shape`` as an ``int64_t*``.
A failing call makes the kernel return -1 with the callee's error as the last error. The call's
value is what the callee returned, read as the call's type.

``call_extern``/``call_pure_extern("f", args...)`` call the C function ``f`` directly; one not
declared by the headers generated code includes gets a prototype from the argument types.
The intrinsic helpers of ``topi.cortex_m.dsp`` (``pytvm_smlad``, ...) get their definition.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from ...ffi.errors import TVMValueError
from ...tir import expr as E
from ...tir.expr import is_float, lanes_of
from ...topi.cortex_m.dsp import C_HELPERS
from ..abi import CPU_DEVICE, EXTERNAL_CALL_OPS, dl_type_fields
from ..libc_names import C_LIBRARY_NAMES
from .types import c_scalar_type


class _ExprPrinter(Protocol):
    """What printing a call needs of the expression printer (``expr.ExprPrinter``)."""

    extern_decls: dict[str, str]
    fail: Callable[[], str] | None
    dev_id: str

    def emit(self, line: str) -> None:
        """Write ``line`` before the statement being printed."""

    def scalar(self, e: E.PrimExpr) -> str:
        """The C expression of ``e``."""
        ...

    def new_temp(self) -> int:
        """A number for the names of a new temporary."""
        ...


__all__ = ["CALL_OPS", "c_string", "print_call"]

_PACKED = ("tir.tvm_call_packed", "tir.tvm_call_cpacked")
_EXTERN = ("tir.call_extern", "tir.call_pure_extern")
#: The calls this module prints.
CALL_OPS = EXTERNAL_CALL_OPS

# Type codes of packed arguments (pytvm/c_runtime_api.h).
_INT, _FLOAT, _HANDLE, _DLTENSOR, _STR = 1, 3, 4, 7, 8


def c_string(text: str) -> str:
    """``text`` as a C string literal (non-printable and non-ASCII bytes escaped)."""
    out = []
    for byte in text.encode():
        ch = chr(byte)
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif 32 <= byte < 127:  # noqa: PLR2004 - printable ASCII
            out.append(ch)
        else:
            out.append(f"\\{byte:03o}")
    return '"' + "".join(out) + '"'


def print_call(p: _ExprPrinter, e: E.Call, arg: Callable[[E.PrimExpr], str]) -> str:
    """The C expression of call ``e`` (one of :data:`CALL_OPS`); statements it needs first go
    to ``p.emit``.
    """
    if lanes_of(e.dtype) > 1:
        raise TVMValueError(f"the C code generator cannot call {e.op} for a vector ({e.dtype})")
    if e.op in _PACKED:
        return _packed(p, e)
    if e.op in _EXTERN:
        return _extern(p, e, arg)
    if e.op == "tir.tvm_stack_make_shape":
        return _shape(p, e.args)
    return _array(p, e)


def _callee(e: E.Call) -> str:
    if not e.args or not isinstance(e.args[0], E.StringImm):
        raise TVMValueError(f"{e.op}: the first argument must be the callee's name (a string)")
    return e.args[0].value


def _extern(p: _ExprPrinter, e: E.Call, arg: Callable[[E.PrimExpr], str]) -> str:
    name = _callee(e)
    if not name.isidentifier() or not name.isascii():
        raise TVMValueError(f"{e.op}: {name!r} is not the name of a C function")
    args = e.args[1:]
    if name in C_HELPERS:  # an intrinsic helper: its definition instead of a prototype
        p.extern_decls.setdefault(name, C_HELPERS[name])
    elif name not in C_LIBRARY_NAMES and name not in p.extern_decls:
        params = ", ".join(_c_type(a.dtype) for a in args) or "void"
        p.extern_decls[name] = f"extern {_c_type(e.dtype)} {name}({params});"
    return f"{name}({', '.join(arg(a) for a in args)})"


def _c_type(dtype: str) -> str:
    return "void*" if dtype == "handle" else c_scalar_type(dtype)


def _packed(p: _ExprPrinter, e: E.Call) -> str:
    if p.fail is None:
        raise TVMValueError(f"{e.op} outside a kernel's body")
    name = _callee(e)
    args = e.args[1:]
    k = p.new_temp()
    n = max(1, len(args))
    values, codes, ret, ret_code = (f"pytvm_{x}{k}" for x in ("args", "codes", "ret", "ret_code"))
    cache = f"pytvm_func{k}"
    p.emit(f"static TVMFunctionHandle {cache} = NULL;")
    p.emit(f"TVMValue {values}[{n}]; int {codes}[{n}]; TVMValue {ret}; int {ret_code} = 0;")
    for i, a in enumerate(args):
        field, code, value = _packed_value(p, a)
        p.emit(f"{values}[{i}].{field} = {value}; {codes}[{i}] = {code};")
    p.emit(f"{ret}.v_int64 = 0;")
    call = f"pytvm_call_packed(&{cache}, {c_string(name)}, {values}, {codes}, {len(args)}"
    p.emit(f"if ({call}, &{ret}, &{ret_code}) != 0) {p.fail()}")
    if e.dtype == "handle":
        return f"{ret}.v_handle"
    if is_float(e.dtype):
        return f"(({c_scalar_type(e.dtype)}){ret}.v_float64)"
    return f"(({c_scalar_type(e.dtype)}){ret}.v_int64)"


def _packed_value(p: _ExprPrinter, a: E.PrimExpr) -> tuple[str, int, str]:
    """The ``TVMValue`` field, type code and C value of packed argument ``a``."""
    if isinstance(a, E.StringImm):
        return "v_str", _STR, c_string(a.value)
    if isinstance(a, E.Call) and a.op == "tir.tvm_stack_make_array":
        return "v_handle", _DLTENSOR, _array(p, a)
    if a.dtype == "handle":
        return "v_handle", _HANDLE, f"(void*)({p.scalar(a)})"
    if is_float(a.dtype):
        return "v_float64", _FLOAT, f"(double)({p.scalar(a)})"
    return "v_int64", _INT, f"(int64_t)({p.scalar(a)})"


def _shape(p: _ExprPrinter, dims: tuple[E.PrimExpr, ...]) -> str:
    """An ``int64_t`` array on the stack holding ``dims``; its name."""
    name = f"pytvm_shape{p.new_temp()}"
    values = ", ".join(f"(int64_t)({p.scalar(d)})" for d in dims) or "0"
    p.emit(f"int64_t {name}[{max(1, len(dims))}] = {{{values}}};")
    return name


def _array(p: _ExprPrinter, e: E.Call) -> str:
    """A ``DLTensor`` on the stack (``tvm_stack_make_array(data, shape, strides, ndim,
    dtype, elem_offset)``); a pointer to it.
    """
    if len(e.args) != 6:  # noqa: PLR2004 - the builtin's arity
        raise TVMValueError(f"tvm_stack_make_array takes 6 arguments, got {len(e.args)}")
    data, shape, strides, ndim, dtype, offset = e.args
    name = f"pytvm_tensor{p.new_temp()}"
    code, bits, lanes = dl_type_fields(dtype.dtype)
    elem_bytes = max(1, bits * lanes // 8)
    p.emit(f"DLTensor {name};")
    p.emit(f"{name}.data = (void*)({p.scalar(data)});")
    p.emit(f"{name}.device.device_type = {CPU_DEVICE}; {name}.device.device_id = {p.dev_id};")
    p.emit(f"{name}.ndim = (int32_t)({p.scalar(ndim)});")
    p.emit(f"{name}.dtype.code = {code}; {name}.dtype.bits = {bits}; {name}.dtype.lanes = {lanes};")
    p.emit(f"{name}.shape = (int64_t*)({_pointer(p, shape)});")
    p.emit(f"{name}.strides = (int64_t*)({_pointer(p, strides)});")
    p.emit(f"{name}.byte_offset = (uint64_t)({p.scalar(offset)}) * {elem_bytes}u;")
    return f"(&{name})"


def _pointer(p: _ExprPrinter, e: E.PrimExpr) -> str:
    """A shape or strides argument: a ``tvm_stack_make_shape``, a handle, or 0 (NULL)."""
    if isinstance(e, E.Call) and e.op == "tir.tvm_stack_make_shape":
        return _shape(p, e.args)
    if isinstance(e, E.IntImm) and e.value == 0:
        return "NULL"
    return p.scalar(e)
