"""A kernel's scalar return value (TVM's ``T.ret``), as both code generators lower it.

``Evaluate(Call(dtype, "tir.ret", [value]))`` ends the kernel with ``value`` as its result, as
TVM's packed API does: the body function receives the packed function's ``out_ret_value`` and
``out_ret_tcode``, writes the value (widened to the 8-byte slot: an ``int64`` for integers, a
``double`` for floats) and its type code, and leaves with the status 1 through the cleanups of
every live workspace; the packed function turns that status into 0. A kernel without ``tir.ret``
returns None (type code 0) and its body function has no such parameters.

The ``__tvm_ffi_`` adapters copy the value and type code into tvm-ffi's result (the type codes
of ints, bools and floats are tvm-ffi's type indices), so Apache TVM sees it too.

Examples
--------
>>> from pytvm.tir import Call, Evaluate, IntImm
>>> body = Evaluate(Call("int64", "tir.ret", (IntImm("int64", 42),)))
>>> has_return(body), return_type_code("int64", "f"), return_type_code("float32", "f")
(True, 1, 3)
"""

from __future__ import annotations

from ..ffi.dtype import DataType, DataTypeCode
from ..ffi.errors import TVMValueError
from ..tir import expr as E
from ..tir import stmt as S
from ..tir.functor import post_order_visit

__all__ = [
    "BOOL_CODE",
    "FLOAT_CODE",
    "INT_CODE",
    "RETURNED",
    "has_return",
    "return_type_code",
    "return_value",
]

#: The body function's status after ``tir.ret`` (0: finished without a value, -1: failed).
RETURNED = 1

#: The packed type codes of a returned int, bool and float (tvm-ffi's type indices too).
INT_CODE, BOOL_CODE, FLOAT_CODE = 1, 2, 3


def return_value(s: S.Stmt) -> E.PrimExpr | None:
    """The returned value when ``s`` is ``Evaluate(tir.ret(value))``, else None."""
    if isinstance(s, S.Evaluate) and isinstance(s.value, E.Call) and s.value.op == "tir.ret":
        call = s.value
        if len(call.args) != 1:
            raise TVMValueError(f"tir.ret takes one value, got {len(call.args)}")
        return call.args[0]
    return None


def has_return(s: S.Stmt) -> bool:
    """Whether ``s`` contains a ``tir.ret``."""
    found: list[bool] = []

    def visit(node: object) -> None:
        if isinstance(node, E.Call) and node.op == "tir.ret":
            found.append(True)

    post_order_visit(s, visit)
    return bool(found)


def return_type_code(dtype: str, where: str) -> int:
    """The packed type code of a returned ``dtype`` (1 int, 2 bool, 3 float); raises
    ``TVMValueError`` for a vector or a type with no scalar slot; ``where`` names the kernel.
    """
    t = DataType(dtype)
    code = DataTypeCode(t.code)
    if t.lanes == 1 and code is DataTypeCode.BOOL:
        return BOOL_CODE
    if t.lanes == 1 and code in (DataTypeCode.INT, DataTypeCode.UINT) and t.bits <= 64:  # noqa: PLR2004
        return INT_CODE
    if t.lanes == 1 and code is DataTypeCode.FLOAT and t.bits in (16, 32, 64):
        return FLOAT_CODE
    raise TVMValueError(
        f"{where}: cannot return a value of type {dtype}; a kernel returns one int, bool or "
        "float scalar (T.ret / return)"
    )
