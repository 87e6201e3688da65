"""A whole LLVM module for lowered kernels: bodies, packed functions, adapters, the prelude.

The text :func:`codegen_llvm` returns is what the module's ``get_source("ll")`` shows and what
the LLVM backend compiles: for each kernel its body function and closures, the exported packed
function (``main`` is exported as ``__tvm_main__``) and the ``__tvm_ffi_<name>`` adapter for
Apache TVM 0.27; the entry functions of a one-kernel library (``__tvm_main__`` and
``__tvm_ffi_main`` calling it); then the prelude's helpers, runtime hooks and markers.
"""

from __future__ import annotations

import re

from llvmlite import ir  # type: ignore[import-untyped]

from ...tir.function import IRModule
from ..abi import CPU_DEVICE, entry_kernel, export_symbol, internal_name
from ..kernel_checks import check_kernel_name, check_lowered
from .function import FunctionEmitter
from .helpers import Helpers
from .intrinsics import MathCalls
from .packed import emit_entry_functions, emit_packed_function, emit_tvm_ffi_adapter
from .prelude import prelude_ir

__all__ = ["codegen_llvm"]


def codegen_llvm(
    mod: IRModule,
    target_text: str = "llvm",
    triple: str = "",
    data_layout: str = "",
    definitions: bool = True,
    entry: bool = True,
) -> str:
    """LLVM IR text of every function of ``mod`` (already through the lowering pipeline), for
    ``triple`` with ``data_layout`` (empty: left to the compiler). Without ``definitions`` the
    library's exported variables are only declared: ``mod`` is a later part of a library
    compiled in parts and linked with a first part that defines them. With ``entry``, a module
    of one kernel also gets the library's entry functions (``__tvm_main__``, ``__tvm_ffi_main``);
    a part of a larger library does not.
    """
    module = ir.Module(name="pytvm")
    if triple:
        module.triple = triple
    if data_layout:
        module.data_layout = data_layout
    helpers = Helpers(module)
    math = MathCalls(module)
    entry_name = entry_kernel(list(mod.functions)) if entry else None
    for func_name, func in mod.functions.items():
        check_kernel_name(func_name)
        check_lowered(func_name, func, "LLVM")
        prefix = internal_name(func_name)
        compute = FunctionEmitter(module, helpers, math, func, prefix).emit()
        symbol = export_symbol(func_name)
        accepted = tuple(func.attrs.get("device_types", ())) or (CPU_DEVICE,)
        packed = emit_packed_function(
            module, helpers, math, func, func_name, symbol, compute, accepted
        )
        adapter = emit_tvm_ffi_adapter(module, helpers, func_name, packed, len(func.params))
        if func_name == entry_name:
            emit_entry_functions(module, packed, adapter)
    text = str(module)
    # The prelude defines what the module declared of it.
    declared = "|".join(re.escape(name) for name in helpers.declared())
    if declared:
        text = re.sub(rf'^declare [^\n]*@"(?:{declared})"\([^\n]*\n', "", text, flags=re.M)
    head = f"; pytvm target: {target_text}\n"
    prelude = prelude_ir(definitions)
    return head + text + "\n; The prelude: runtime hooks, markers, messages.\n" + prelude
