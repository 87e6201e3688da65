"""What every code generator refuses: kernel names that are no symbols, functions not lowered."""

from __future__ import annotations

from ..ffi.errors import TVMValueError
from ..tir.function import PrimFunc

__all__ = ["check_kernel_name", "check_lowered"]


def check_kernel_name(name: str) -> None:
    """Raise ``TVMValueError`` unless ``name`` can be the symbol of an exported kernel."""
    if not name.isidentifier() or not name.isascii() or name.startswith("pytvm_"):
        raise TVMValueError(
            f"kernel name {name!r} is not a C identifier (letters, digits, '_'; not starting "
            "with a digit or 'pytvm_')"
        )


def check_lowered(name: str, func: PrimFunc, generator: str = "C") -> None:
    """Raise ``TVMValueError`` unless ``func`` went through the lowering pipeline; the message
    names the ``generator`` (``"C"``, ``"LLVM"``).
    """
    if not func.attrs.get("tir.flattened", False):
        raise TVMValueError(
            f"{name}: the {generator} code generator needs a lowered function (run "
            "pytvm.lower or the tir pipeline first: its buffers are still multi-dimensional)"
        )
