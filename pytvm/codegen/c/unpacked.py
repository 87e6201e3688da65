"""A whole C file of lowered kernels with the unpacked calling convention (TVM's
``unpacked-api``): one external function ``<prefix><kernel>`` per kernel, called directly by an
ahead-of-time run function (:mod:`pytvm.graph.aot`).

The file includes only the C library's headers (``<stdint.h>``, ``<stddef.h>``, ``<string.h>``,
``<math.h>``): no runtime API, no packed wrappers, no function registry, so it links into a
bundle without the C runtime. Each function is declared before it is defined (for
``-Wmissing-prototypes``); :class:`UnpackedKernel` gives the declaration to callers and the
bytes of workspace the kernel needs (see :mod:`.unpacked_function`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...tir.function import IRModule
from ..kernel_checks import check_kernel_name, check_lowered
from .function import CNames
from .module import _minmax_helpers, _vector_helpers
from .prelude import UNPACKED_PRELUDE
from .unpacked_function import UnpackedFunctionEmitter

__all__ = ["UnpackedKernel", "UnpackedSource", "codegen_c_unpacked"]


@dataclass(frozen=True, slots=True)
class UnpackedKernel:
    """Kernel ``name`` as the C function ``symbol`` (declared by ``prototype``), needing
    ``scratch_bytes`` of workspace; its data pointers (of the C element types
    ``param_types``, one per buffer parameter) precede the workspace.
    """

    name: str
    symbol: str
    prototype: str
    scratch_bytes: int
    param_types: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class UnpackedSource:
    """The C text of a module's kernels and what each one is."""

    source: str
    kernels: tuple[UnpackedKernel, ...]


def codegen_c_unpacked(mod: IRModule, prefix: str = "", target_text: str = "c") -> UnpackedSource:
    """C of every function of ``mod`` (already through the lowering pipeline) as external
    functions named ``prefix + <kernel name>`` with raw pointer parameters and a trailing
    ``uint8_t* workspace``.
    """
    names = CNames()
    bodies: list[str] = []
    vector_types: set[str] = set()
    minmax_types: set[str] = set()
    extern_decls: dict[str, str] = {}
    kernels: list[UnpackedKernel] = []
    for func_name, func in mod.functions.items():
        check_kernel_name(func_name)
        check_lowered(func_name, func)
        emitter = UnpackedFunctionEmitter(func, func_name, prefix + func_name, names)
        text = emitter.emit()
        bodies.append(f"{emitter.prototype}\n{text}")
        vector_types |= emitter.expr.vector_types
        minmax_types |= emitter.expr.minmax_types
        extern_decls = {**emitter.expr.extern_decls, **extern_decls}
        kernels.append(
            UnpackedKernel(
                func_name,
                prefix + func_name,
                emitter.prototype,
                emitter.scratch_bytes,
                emitter.param_types,
            )
        )
    parts = [f"// pytvm target: {target_text} (unpacked kernels)", UNPACKED_PRELUDE]
    parts += [_vector_helpers(t) for t in sorted(vector_types)]
    parts += [_minmax_helpers(t) for t in sorted(minmax_types)]
    parts += list(extern_decls.values())
    parts += bodies
    return UnpackedSource("\n".join(parts) + "\n", tuple(kernels))
