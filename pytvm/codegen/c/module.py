"""A whole C file for a module of lowered kernels: prelude, helpers, bodies, packed functions,
the entry function of a one-kernel library (``__tvm_main__``, ``__tvm_ffi_main``) and, for
``--system-lib``, the C runtime's function registry (seed 001's packed name blob and
``TVMSystemLibEntryPoint``).
"""

from __future__ import annotations

from ...ffi.dtype import DataType, DataTypeCode
from ...ffi.errors import TVMValueError
from ...tir.expr import scalar_of
from ...tir.function import IRModule
from ..abi import ENTRY_SYMBOL, entry_kernel, export_symbol, internal_name
from ..kernel_checks import check_kernel_name, check_lowered
from .function import CFunctionEmitter, CNames
from .packed import TYPE_NAMES_C, emit_packed_function
from .prelude import PRELUDE
from .tvm_ffi_export import TVM_FFI_HEAD, entry_functions_c, tvm_ffi_adapter
from .types import c_scalar_type, c_vector_type, vector_typedef

__all__ = ["codegen_c", "system_lib_registry"]

#: The registry's count is one byte.
_MAX_FUNCTIONS = 255
#: Device types a system-library kernel accepts: the CPU and the accelerator emulator's pool.
SYSTEM_LIB_DEVICES = (1, 16)


def codegen_c(mod: IRModule, system_lib: bool = False, target_text: str = "c") -> str:
    """C source of every function of ``mod`` (already through the lowering pipeline)."""
    names = CNames()
    bodies: list[str] = []
    vector_types: set[str] = set()
    minmax_types: set[str] = set()
    extern_decls: dict[str, str] = {}
    exported: list[str] = []
    public: list[str] = []
    devices = SYSTEM_LIB_DEVICES if system_lib else (1,)
    for func_name, func in mod.functions.items():
        check_kernel_name(func_name)
        check_lowered(func_name, func)
        emitter = CFunctionEmitter(func, internal_name(func_name), names)
        bodies.append(emitter.emit())
        symbol = export_symbol(func_name)
        accepted = tuple(func.attrs.get("device_types", ())) or devices
        bodies.append(emit_packed_function(func, func_name, names, accepted, symbol))
        bodies.append(tvm_ffi_adapter(func_name, symbol, len(func.params)))
        vector_types |= emitter.expr.vector_types
        minmax_types |= emitter.expr.minmax_types
        extern_decls = {**emitter.expr.extern_decls, **extern_decls}
        exported.append(symbol)
        public.append(func_name)
    entry = entry_kernel(list(mod.functions))
    if entry is not None:
        bodies.append(entry_functions_c(entry, export_symbol(entry)))
    parts = [f"// pytvm target: {target_text}", PRELUDE, TYPE_NAMES_C, TVM_FFI_HEAD]
    parts += [_vector_helpers(t) for t in sorted(vector_types)]
    parts += [_minmax_helpers(t) for t in sorted(minmax_types)]
    parts += list(extern_decls.values())
    parts += bodies
    if system_lib:
        parts.append(system_lib_registry(exported, public))
    return "\n".join(parts) + "\n"


def system_lib_registry(symbols: list[str], names: list[str] | None = None) -> str:
    """The C runtime's registry of the kernels exported as ``symbols``; each is registered under
    its kernel name ``names`` (default: the symbol, ``main`` for ``__tvm_main__``).
    ``TVMSystemLibEntryPoint`` returns it.
    """
    if len(symbols) > _MAX_FUNCTIONS:
        raise TVMValueError(f"a system library holds at most 255 functions, got {len(symbols)}")
    if names is None:
        names = ["main" if s == ENTRY_SYMBOL else s for s in symbols]
    blob = "".join(f'"{n}\\0" ' for n in names)
    funcs = ", ".join(f"(TVMBackendPackedCFunc){s}" for s in symbols)
    return "\n".join(
        [
            "/* The C runtime's function registry: a count, then the names, then a final NUL. */",
            f'static const char pytvm_names[] = "\\x{len(names):02x}" {blob};',
            f"static const TVMBackendPackedCFunc pytvm_funcs[] = {{{funcs}}};",
            "#if defined(PYTVM_CRT)",
            '#include "pytvm_crt/module.h"',
            "static const TVMFuncRegistry pytvm_registry = {pytvm_names, pytvm_funcs};",
            "static const TVMModule pytvm_system_lib = {&pytvm_registry};",
            "const TVMModule* TVMSystemLibEntryPoint(void) { return &pytvm_system_lib; }",
            "#else",
            "/* The same layout, for a host library that carries the registry. */",
            "typedef struct { const char* names; const TVMBackendPackedCFunc* funcs; } "
            "pytvm_func_registry;",
            "typedef struct { const pytvm_func_registry* registry; } pytvm_module;",
            "static const pytvm_func_registry pytvm_registry = {pytvm_names, pytvm_funcs};",
            "static const pytvm_module pytvm_system_lib = {&pytvm_registry};",
            "TVM_DLL const void* TVMSystemLibEntryPoint(void);",
            "TVM_DLL const void* TVMSystemLibEntryPoint(void) { return &pytvm_system_lib; }",
            "#endif",
        ]
    )


def _vector_helpers(dtype: str) -> str:
    v, s = c_vector_type(dtype), c_scalar_type(scalar_of(dtype))
    return "\n".join(
        [
            vector_typedef(dtype),
            f"PYTVM_INLINE {v} pytvm_vload_{dtype}(const {s}* p) {{ {v} v; "
            "memcpy(&v, p, sizeof v); return v; }",
            f"PYTVM_INLINE void pytvm_vstore_{dtype}({s}* p, {v} v) {{ memcpy(p, &v, sizeof v); }}",
            # every lane named: ``{0} + x`` promotes a _Float16 x (excess precision) and fails
            f"PYTVM_INLINE {v} pytvm_bcast_{dtype}({s} x) {{ return ({v}){{"
            + ", ".join(["x"] * DataType(dtype).lanes)
            + "}; }",
            *_vector_minmax(dtype),
        ]
    )


def _vector_minmax(dtype: str) -> list[str]:
    """Lanewise min/max of two vectors as a compare and a blend (no per-lane loop)."""
    t = DataType(dtype)
    if t.code not in (DataTypeCode.INT, DataTypeCode.UINT, DataTypeCode.FLOAT) or t.bits < 8:  # noqa: PLR2004
        return []
    v = c_vector_type(dtype)
    mask = f"pytvm_mask_{dtype}"
    lines = [f"typedef int{t.bits}_t {mask} __attribute__((vector_size({t.lanes * t.bits // 8})));"]
    for kind, op in (("min", "<"), ("max", ">")):
        lines.append(
            f"PYTVM_INLINE {v} pytvm_v{kind}_{dtype}({v} a, {v} b) {{ {mask} m = "
            f"({mask})(a {op} b); return ({v})((({mask})a & m) | (({mask})b & ~m)); }}"
        )
    return lines


def _minmax_helpers(dtype: str) -> str:
    s = c_scalar_type(dtype)
    return (
        f"PYTVM_INLINE {s} pytvm_min_{dtype}({s} a, {s} b) {{ return a < b ? a : b; }}\n"
        f"PYTVM_INLINE {s} pytvm_max_{dtype}({s} a, {s} b) {{ return a > b ? a : b; }}"
    )
