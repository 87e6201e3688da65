"""``LLVMModule``: kernels LLVM compiled and linked into this process (no shared object).

It behaves as a library module built from C does: ``mod["f"](...)``, ``mod(...)`` for the entry
function, ``time_evaluator``, ``get_source()`` (the LLVM IR text), ``save`` and
``export_library``, which links the kept object code into a shared object that
``pytvm.runtime.load_module`` (or a stock Apache TVM 0.27) loads like any other.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..ffi import PackedFunc
from ..ffi.c_function import CFunction
from ..ffi.errors import TVMValueError
from ..runtime.module import ENTRY_FUNC, Module, check_exportable, export_with_fcompile
from .llvm_compiler import link_shared_object

__all__ = ["MODULE_CTX_SYMBOL", "LLVMModule"]

#: The library's module context: kernels calling packed functions look them up on it.
MODULE_CTX_SYMBOL = "__tvm_module_ctx"


class LLVMModule(Module):
    """Kernels compiled in process by LLVM: call them, time them, read their IR, export them.

    ``library`` keeps the JIT-linked code alive; ``addresses`` maps each kernel's name (and the
    entry symbol) to its address, and ``__tvm_module_ctx`` to the module context this module
    sets to itself; ``source`` is the IR text and ``code`` the object code it compiled to.
    """

    def __init__(
        self, library: Any, addresses: dict[str, int], source: str, code: bytes, target: str
    ) -> None:
        super().__init__()
        self._library = library
        self._addresses = dict(addresses)
        context = self._addresses.pop(MODULE_CTX_SYMBOL, 0)
        if context:  # packed calls of the kernels look functions up on this module
            ctypes.c_void_p.from_address(context).value = self.handle
        self._source = source
        self._code = code
        #: The target the kernels were built for.
        self.target = target

    @property
    def type_key(self) -> str:
        """``"llvm"`` (TVM's key for modules LLVM compiled)."""
        return "llvm"

    def _get_own_function(self, name: str) -> PackedFunc | None:
        func = self._functions.get(name)
        if func is not None:
            return func
        address = self._addresses.get(name)
        if address is None and name == self.entry_name:
            address = self._addresses.get(ENTRY_FUNC)  # a kernel "main" is the entry symbol
        if address is None:
            return None
        func = CFunction(address, resource=self.handle, owner=self, name=name)
        self._functions[name] = func
        return func

    def get_source(self, fmt: str = "") -> str:
        """The LLVM IR text (``fmt`` may be ``""``, ``"ll"`` or ``"llvm"``)."""
        if fmt not in ("", "ll", "llvm"):
            raise TVMValueError(
                f"get_source: an LLVM module has source of format 'll', not {fmt!r}"
            )
        return self._source

    def save(self, file_name: str | os.PathLike[str], fmt: str = "") -> None:
        """Save the IR (``.ll``), the object code (``.o``) or a shared object (anything else)."""
        kind = fmt or Path(file_name).suffix.lstrip(".")
        if kind == "c":
            raise TVMValueError(
                f"save({str(file_name)!r}): an LLVM-built module has no C source; save its IR "
                "(.ll), object code (.o) or a shared object, or build with -backend=c"
            )
        if kind in ("ll", "llvm"):
            Path(file_name).write_text(self._source)
        elif kind == "o":
            Path(file_name).write_bytes(self._code)
        else:
            self.export_library(file_name)

    def export_library(
        self,
        file_name: str | os.PathLike[str],
        *,
        fcompile: Callable[..., Any] | None = None,
        addons: Sequence[str] | None = None,
        workspace_dir: str | None = None,
        **kwargs: Any,
    ) -> Any:
        """Link the object code into the shared object ``file_name`` (needs a system linker);
        a ``file_name`` ending in ``.tar`` gets TVM's archive of it (``lib0.o``) instead.

        With ``fcompile`` (or ``addons``), TVM's way: the object code is written as ``lib0.o``
        and ``fcompile(file_name, [*addons, "<workspace>/lib0.o"], **kwargs)`` links it (e.g.
        ``pytvm.support.cc.create_shared``); its result is returned.
        """
        check_exportable(self, "this module")
        if fcompile is None and not addons and not os.fspath(file_name).endswith(".tar"):
            link_shared_object(self._code, file_name)
            return None
        if getattr(fcompile, "need_system_lib", False):
            raise TVMValueError(
                f"export_library: {getattr(fcompile, '__name__', fcompile)!r} needs a system "
                "library, which the LLVM backend does not build; compile with "
                "target='c --system-lib' for it"
            )
        return export_with_fcompile(
            file_name, {"lib0.o": self._code}, fcompile, addons, workspace_dir, kwargs
        )
