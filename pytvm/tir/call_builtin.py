"""Calls out of a kernel: packed functions, extern C functions, and intrinsics by name.

TVM's ``tir.call_packed`` / ``call_cpacked`` / ``call_extern`` / ``call_pure_extern`` /
``call_intrin``: each builds a :class:`~pytvm.tir.expr.Call` of a registered builtin; the
callee's name travels as a leading ``StringImm`` argument, and string arguments become
``StringImm`` too.

Examples
--------
>>> from pytvm import tir
>>> x = tir.Var("x", "handle")
>>> call = tir.call_packed("my_func", x, 3)
>>> call.op.name, call.dtype, [str(a) for a in call.args]
('tir.tvm_call_packed', 'int32', ["'my_func'", 'x', '3'])
"""

from __future__ import annotations

from typing import Any

from ..ffi.errors import TVMTypeError
from .expr import Buffer, Call, IntImm, PrimExpr, StringImm, const, convert
from .intrinsic import Op

__all__ = ["call_cpacked", "call_extern", "call_intrin", "call_packed", "call_pure_extern"]


def _arg(value: Any) -> PrimExpr:
    """A call argument: strings become ``StringImm``, numbers constants."""
    if isinstance(value, str):
        return StringImm(value)
    return convert(value)


def _packed_arg(value: Any) -> PrimExpr:
    """An argument of a packed call: a buffer becomes TVM's ``tvm_stack_make_array`` of its
    data, shape, strides (0: compact), ndim, element type (a zero of it) and element offset, so
    the callee receives a ``DLTensor*``.
    """
    if not isinstance(value, Buffer):
        return _arg(value)
    shape = Call("handle", Op.get("tir.tvm_stack_make_shape"), value.shape)
    strides: PrimExpr = (
        Call("handle", Op.get("tir.tvm_stack_make_shape"), value.strides)
        if value.strides
        else IntImm("int32", 0)
    )
    offset = value.elem_offset if value.elem_offset is not None else IntImm("int32", 0)
    fields = (value.data, shape, strides, IntImm("int32", value.ndim), const(0, value.dtype))
    return Call("handle", Op.get("tir.tvm_stack_make_array"), (*fields, offset))


def _named_call(dtype: str, op_name: str, func_name: Any, args: tuple[Any, ...]) -> Call:
    if not isinstance(func_name, str):
        raise TVMTypeError(f"{op_name}: the function name must be a string, got {func_name!r}")
    return Call(dtype, Op.get(op_name), (StringImm(func_name), *(_arg(a) for a in args)))


def call_packed(func_name: str, *args: Any, span: Any = None) -> Call:
    """Call the packed function ``func_name`` (looked up in the global registry at run time);
    a buffer argument is passed as a ``DLTensor*`` (``tvm_stack_make_array``).
    """
    packed = tuple(_packed_arg(a) for a in args)
    return _named_call("int32", "tir.tvm_call_packed", func_name, packed)


def call_cpacked(func_name: str, *args: Any, span: Any = None) -> Call:
    """Call the packed-signature C function ``func_name`` linked into the module."""
    packed = tuple(_packed_arg(a) for a in args)
    return _named_call("int32", "tir.tvm_call_cpacked", func_name, packed)


def call_extern(dtype: str, func_name: str, *args: Any, span: Any = None) -> Call:
    """Call the extern C function ``func_name`` returning ``dtype``."""
    return _named_call(dtype, "tir.call_extern", func_name, args)


def call_pure_extern(dtype: str, func_name: str, *args: Any, span: Any = None) -> Call:
    """Call the side-effect-free extern C function ``func_name`` returning ``dtype``."""
    return _named_call(dtype, "tir.call_pure_extern", func_name, args)


def call_intrin(dtype: str, func_name: str, *args: Any, span: Any = None) -> Call:
    """Call the intrinsic ``func_name`` (``"tir.exp"``; a bare ``"exp"`` means ``"tir.exp"``).

    Raises
    ------
    TVMValueError
        When no intrinsic of that name is registered.
    """
    name = func_name if "." in func_name else f"tir.{func_name}"
    return Call(dtype, Op.get(name), tuple(_arg(a) for a in args))
