"""``Op``: what a ``tir.Call`` calls (TVM's ``tvm.ir.Op``), and the registry of intrinsic names.

An ``Op`` is its name: it compares, hashes and prints as the string (``call.op == "tir.exp"``
holds), and it has TVM's ``name`` attribute and ``Op.get`` lookup, which accepts only
registered names.

Examples
--------
>>> from pytvm import tir
>>> call = tir.call_intrin("float32", "tir.exp", tir.const(1.0))
>>> call.op.name, call.op == tir.Op.get("tir.exp")
('tir.exp', True)
"""

from __future__ import annotations

from typing import Any

from ..ffi.errors import TVMValueError

__all__ = ["Op", "list_op_names", "register_op"]


class Op(str):
    """The operator a call node applies, identified by its registered name."""

    __slots__ = ()

    @property
    def name(self) -> str:
        """The operator's registered name (``"tir.exp"``)."""
        return str.__str__(self)

    @staticmethod
    def get(op_name: str) -> Op:
        """The registered operator ``op_name``.

        Raises
        ------
        TVMValueError
            When no operator of that name is registered.
        """
        if op_name not in _REGISTRY:
            raise TVMValueError(
                f"Operator {op_name} is not registered; known tir operators include "
                f"{', '.join(sorted(_REGISTRY)[:6])}, ... (see tir.intrinsic.list_op_names())"
            )
        return _REGISTRY[op_name]

    def same_as(self, other: Any) -> bool:
        """Whether ``other`` is the same operator."""
        return isinstance(other, str) and str.__eq__(self, other)

    def __repr__(self) -> str:
        return f"Op({self.name})"


_REGISTRY: dict[str, Op] = {}


def register_op(op_name: str) -> Op:
    """Register ``op_name`` (idempotent) and return its ``Op``."""
    found = _REGISTRY.get(op_name)
    if found is None:
        found = _REGISTRY[op_name] = Op(op_name)
    return found


def list_op_names() -> list[str]:
    """The registered operator names, sorted."""
    return sorted(_REGISTRY)


# TVM's tir intrinsics (math, bit operations, control and the packed/extern calling builtins).
_BUILTINS = (
    "exp", "exp2", "exp10", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "tanh", "tan",
    "erf", "sigmoid", "floor", "ceil", "round", "nearbyint", "trunc", "fabs", "pow", "fmod",
    "sin", "cos", "sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh", "atanh", "atan2",
    "hypot", "copysign", "nextafter", "ldexp", "clz", "popcount", "isnan", "isinf",
    "isfinite", "isnullptr", "q_multiply_shift", "bitwise_and", "bitwise_or", "bitwise_xor",
    "bitwise_not", "shift_left", "shift_right", "if_then_else", "likely", "reinterpret", "ret",
    "assume", "undef", "address_of", "call_extern", "call_pure_extern", "call_llvm_intrin",
    "call_llvm_pure_intrin", "tvm_call_packed", "tvm_call_cpacked", "tvm_call_packed_lowered",
    "tvm_call_cpacked_lowered", "tvm_access_ptr", "tvm_stack_alloca", "tvm_stack_make_shape",
    "tvm_stack_make_array", "tvm_struct_get", "tvm_struct_set", "tvm_throw_last_error",
    "tvm_static_handle", "tvm_context_id", "tvm_thread_allreduce", "tvm_storage_sync",
    "tvm_warp_shuffle", "tvm_load_matrix_sync", "tvm_store_matrix_sync", "tvm_mma_sync",
    "tvm_fill_fragment", "tvm_bmma_sync", "prefetch", "vectorhigh", "vectorlow",
    "vectorcombine", "large_uint_imm", "lookup_param", "start_profile_intrinsic",
    "end_profile_intrinsic", "vscale", "anylist_getitem", "type_annotation",
)  # fmt: skip
for _name in _BUILTINS:
    register_op(f"tir.{_name}")
del _name
