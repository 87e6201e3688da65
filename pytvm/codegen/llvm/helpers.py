"""The prelude's helpers as seen from a module being built: declarations and string constants.

Generated functions call the helpers of ``prelude`` through these declarations; the
module's text drops them again when the prelude's definitions are appended (see
``module``).
"""

from __future__ import annotations

from llvmlite import ir  # type: ignore[import-untyped]

from .types import I8, I32, I64, PTR

__all__ = ["Helpers"]

_VOID = ir.VoidType()
_SIGNATURES: dict[str, tuple[ir.Type, list[ir.Type]]] = {
    "pytvm_set_error": (_VOID, [PTR]),
    "pytvm_ws_alloc": (PTR, [I32, I64, I32, I32]),
    "pytvm_ws_free": (I32, [I32, PTR]),
    "pytvm_parallel": (I32, [PTR, PTR]),
    "pytvm_type_name": (PTR, [I32]),
    "pytvm_is_compact": (I32, [PTR, PTR, I32]),
    "pytvm_arg_error": (I32, [PTR, PTR, PTR, PTR]),
    "pytvm_count_error": (I32, [PTR, I64, I64, PTR]),
    "pytvm_shape_error": (I32, [PTR, PTR, PTR, I32]),
    "pytvm_value_error": (I32, [PTR, PTR, PTR, I64, PTR]),
    "pytvm_dtype_error": (I32, [PTR, PTR, I32, I32, I32]),
    "pytvm_check_array": (I32, [PTR, PTR, I32, PTR, I32, I32, PTR, I64]),
    "pytvm_check_shape": (I32, [PTR, PTR, PTR, I32]),
    "pytvm_ffi_call": (I32, [PTR, PTR, I32, PTR, I32, PTR]),
    "pytvm_call_packed": (I32, [PTR, PTR, PTR, PTR, I32, PTR, PTR]),
}


class Helpers:
    """Declares each helper on first use (``helpers["pytvm_set_error"]``); makes C strings."""

    def __init__(self, module: ir.Module) -> None:
        self.module = module
        self._functions: dict[str, ir.Function] = {}
        self._strings: dict[str, ir.GlobalVariable] = {}
        self._tables: dict[tuple[int, ...], ir.GlobalVariable] = {}

    def __getitem__(self, name: str) -> ir.Function:
        fn = self._functions.get(name)
        if fn is None:
            ret, args = _SIGNATURES[name]
            fn = ir.Function(self.module, ir.FunctionType(ret, args), name=name)
            self._functions[name] = fn
        return fn

    def declared(self) -> list[str]:
        """Names of the helpers this module declared."""
        return list(self._functions)

    def string(self, text: str) -> ir.GlobalVariable:
        """A private NUL-terminated constant holding ``text`` (one per distinct text)."""
        var = self._strings.get(text)
        if var is None:
            data = bytearray(text.encode()) + b"\0"
            ty = ir.ArrayType(I8, len(data))
            var = ir.GlobalVariable(self.module, ty, name=f"pytvm.str.{len(self._strings)}")
            var.global_constant = True
            var.linkage = "private"
            var.unnamed_addr = True
            var.initializer = ir.Constant(ty, data)
            var.type = PTR  # llvmlite keeps a typed pointer; LLVM's pointers are opaque
            self._strings[text] = var
        return var

    def i64_table(self, values: tuple[int, ...]) -> ir.GlobalVariable:
        """A private constant array of int64 ``values`` (one per distinct tuple)."""
        var = self._tables.get(values)
        if var is None:
            ty = ir.ArrayType(I64, len(values))
            var = ir.GlobalVariable(self.module, ty, name=f"pytvm.shape.{len(self._tables)}")
            var.global_constant = True
            var.linkage = "private"
            var.unnamed_addr = True
            var.initializer = ir.Constant(ty, list(values))
            var.type = PTR
            self._tables[values] = var
        return var
