"""``CompiledModule``: a library module built from generated C, which keeps its source."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..ffi.errors import TVMValueError
from ..ffi.libinfo import include_dir
from ..runtime.module import LibraryModule, check_exportable, export_with_fcompile

__all__ = ["CompiledModule"]


class CompiledModule(LibraryModule):
    """Kernels compiled from generated C: call them, time them, read or save their source."""

    def __init__(self, path: str | os.PathLike[str], source: str, target: str) -> None:
        super().__init__(path)
        self._source = source
        #: The target the kernels were built for.
        self.target = target

    def get_source(self, fmt: str = "") -> str:
        """The generated C source (``fmt`` may be ``""`` or ``"c"``)."""
        if fmt not in ("", "c"):
            raise TVMValueError(f"get_source: a C module has source of format 'c', not {fmt!r}")
        return self._source

    def export_library(
        self,
        file_name: str | os.PathLike[str],
        *,
        fcompile: Callable[..., Any] | None = None,
        addons: Sequence[str] | None = None,
        workspace_dir: str | None = None,
        **kwargs: Any,
    ) -> Any:
        """Copy the shared object to ``file_name``; with ``fcompile`` (or ``addons``), TVM's
        way: the C source is written as ``lib0.c`` and ``fcompile(file_name, [*addons,
        "<workspace>/lib0.c"], options=[*options, "-I<pytvm headers>"], **kwargs)`` compiles
        it; its result is returned. A ``file_name`` ending in ``.tar`` (and no ``fcompile``)
        gets TVM's archive of the source, ``lib0.c``.
        """
        check_exportable(self, self.path.name)
        files = {"lib0.c": self._source.encode()}
        if fcompile is None and not addons:
            if not os.fspath(file_name).endswith(".tar"):
                return super().export_library(file_name)
            return export_with_fcompile(file_name, files, None, None, workspace_dir, kwargs)
        if getattr(fcompile, "need_system_lib", False) and "--system-lib" not in self.target:
            raise TVMValueError(
                f"export_library: {getattr(fcompile, '__name__', fcompile)!r} needs a system "
                f"library; this module was built for {self.target!r}: add --system-lib"
            )
        options = kwargs.pop("options", None) or []
        options = [options] if isinstance(options, str) else list(options)
        kwargs["options"] = [*options, f"-I{include_dir()}"]
        return export_with_fcompile(file_name, files, fcompile, addons, workspace_dir, kwargs)

    def save(self, file_name: str | os.PathLike[str], fmt: str = "") -> None:
        """Save the C source (``.c``, or ``fmt="c"``) or the shared object (anything else)."""
        if fmt == "c" or str(file_name).endswith(".c"):
            Path(file_name).write_text(self._source)
        else:
            shutil.copyfile(self.path, file_name)
