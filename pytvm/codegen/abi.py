"""The packed ABI both code generators emit: symbols, the body function's parameters, check facts.

A kernel ``f`` becomes three functions in either backend (``c/`` writes C, ``llvm/`` writes LLVM
IR): the body function ``<internal_name(f)>_compute`` (its parameters are
:func:`compute_params`), the exported packed function ``export_symbol(f)`` that checks every
argument and calls the body, and tvm-ffi's adapter ``tvm_ffi_symbol(f)`` (Apache TVM 0.27 loads
a library's functions by those). A library of one kernel also exports the entry functions
``ENTRY_SYMBOL`` and ``TVM_FFI_ENTRY_SYMBOL`` calling it (:func:`entry_kernel`). A failed
argument check sets the last error with the same words in both backends (the message pieces
below) and returns -1.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..ffi.dtype import DataType
from ..runtime.module import KERNEL_SYMBOL_PREFIX
from ..tir import expr as E
from ..tir.function import PrimFunc
from ..tir.functor import IRVisitor
from .libc_names import C_LIBRARY_NAMES

__all__ = [
    "CPU_DEVICE",
    "DTYPE_KINDS",
    "ENTRY_SYMBOL",
    "EXTERNAL_CALL_OPS",
    "FFI_OBJECT_HEADER_BYTES",
    "FFI_TENSOR_TYPE_INDEX",
    "MSG_ARGUMENTS",
    "MSG_DIMENSIONS",
    "MSG_EXPECTED_ARRAY",
    "MSG_EXPECTED_CPU",
    "MSG_NOT_COMPACT",
    "MSG_NOT_COMPACT_GOT",
    "PACKED_LIBRARY_MARKER",
    "STACK_LIMIT_BYTES",
    "TVM_FFI_ENTRY_SYMBOL",
    "TYPE_NAMES",
    "compute_params",
    "dl_type_fields",
    "entry_kernel",
    "export_symbol",
    "internal_name",
    "tvm_ffi_symbol",
]

# ---------------------------------------------------------------------------------- symbols

#: The symbol of a library's entry function (``mod(...)``; TVM's ``__tvm_main__``).
ENTRY_SYMBOL = "__tvm_main__"
#: tvm-ffi's entry function of a one-kernel library (TVM 0.27 calls it for ``mod(...)``).
TVM_FFI_ENTRY_SYMBOL = "__tvm_ffi_main"
#: Exported by every library: tells pytvm's loader to call the packed functions (the
#: ``__tvm_ffi_`` exports serve TVM).
PACKED_LIBRARY_MARKER = "__pytvm_packed_library"


def export_symbol(name: str) -> str:
    """The C symbol of kernel ``name``: itself, except ``main`` (C's program entry), which is
    exported as the library's entry function ``__tvm_main__``, and a C library name (``exp``,
    ``sin``, ``isnan`` ...), exported as ``pytvm_kernel_<name>`` (the loaders look there first).
    """
    if name == "main":
        return ENTRY_SYMBOL
    return KERNEL_SYMBOL_PREFIX + name if name in C_LIBRARY_NAMES else name


def tvm_ffi_symbol(name: str) -> str:
    """The symbol of kernel ``name``'s tvm-ffi adapter (``__tvm_ffi_<name>``)."""
    return f"__tvm_ffi_{name}"


def entry_kernel(names: Sequence[str]) -> str | None:
    """The kernel a library's entry function calls: its only kernel (TVM makes a one-function
    module's function the entry), or None when it has several or its kernel is ``main``, whose
    packed function already is the entry symbol.
    """
    if len(names) != 1 or names[0] == "main":
        return None
    return names[0]


def internal_name(name: str) -> str:
    """Prefix of the kernel's static helper functions (``<prefix>_compute`` ...)."""
    return "pytvm_kernel_main" if name == "main" else name


#: Calls out of a kernel (packed functions, C functions) and the stack values they pass; each
#: backend's ``calls`` module emits them.
EXTERNAL_CALL_OPS = frozenset(
    {
        "tir.tvm_call_packed",
        "tir.tvm_call_cpacked",
        "tir.call_extern",
        "tir.call_pure_extern",
        "tir.tvm_stack_make_array",
        "tir.tvm_stack_make_shape",
    }
)


# ------------------------------------------------------------------------- the body function

#: Local buffers up to this many bytes live on the stack; larger ones are workspaces.
STACK_LIMIT_BYTES = 32 * 1024


def compute_params(func: PrimFunc) -> tuple[list[E.Var], list[E.Var]]:
    """The body function's parameters: buffer data pointers, then scalars (params, shape vars)."""
    pointers = [func.buffer_map[p].data if p in func.buffer_map else p for p in func.params]
    pointers = [v for v in pointers if v.dtype == "handle"]
    scalars: list[E.Var] = [p for p in func.params if p.dtype != "handle"]
    for buffer in func.buffer_map.values():
        for dim in (*buffer.shape, *buffer.strides):
            for var in _vars_in(dim):
                if all(var is not s for s in scalars):
                    scalars.append(var)
    return pointers, scalars


def _vars_in(e: E.PrimExpr) -> list[E.Var]:
    found: list[E.Var] = []

    class _Collect(IRVisitor):
        def visit_Var(self, node: E.Var) -> None:
            if all(node is not v for v in found):
                found.append(node)

    _Collect().visit(e)
    return found


# ------------------------------------------------------------------------ argument checks

#: Device types a kernel's arrays may live on: the CPU, and the accelerator emulator's pool
#: (CPU-addressable memory of device type 16) when the kernel runs inside the C runtime.
CPU_DEVICE = 1

#: tvm-ffi's type index of a tensor, and the bytes of its object header before the DLTensor.
FFI_TENSOR_TYPE_INDEX = 70
FFI_OBJECT_HEADER_BYTES = 24

#: What a type-check message calls an argument of each type code (``got an opaque handle``).
TYPE_NAMES = {
    0: "None", 1: "int", 2: "bool", 3: "float", 4: "an opaque handle", 5: "a DataType",
    6: "a Device", 7: "an array", 8: "str", 9: "bytes", 68: "a function", 69: "a shape",
    70: "a tensor", 73: "a module",
}  # fmt: skip
#: DLPack's type code names, as a dtype message spells a dtype it got (``float16``).
DTYPE_KINDS = ("int", "uint", "float", "handle", "bfloat")

# The pieces of a failed check's message, after ``<kernel>: argument <name>`` (or ``<kernel>``):
# ``f: argument A: expected an array on the CPU (device type 1), got device type 2``.
MSG_EXPECTED_ARRAY = ": expected an array, got "
MSG_EXPECTED_CPU = ": expected an array on the CPU (device type 1), got device type "
MSG_NOT_COMPACT = ": expected a compact (row-major, contiguous) array"
MSG_NOT_COMPACT_GOT = ", got strides that are not"
#: What a count message counts (``f: expected 3 arguments, got 2``).
MSG_ARGUMENTS = " arguments"
MSG_DIMENSIONS = " dimensions"


def dl_type_fields(dtype: str) -> tuple[int, int, int]:
    """DLPack's (code, bits, lanes) of ``dtype``, as argument checks compare them."""
    t = DataType(dtype)
    return t.code, t.bits, t.lanes
