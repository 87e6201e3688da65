"""``CompiledModule``: a library module built from generated C, which keeps its source."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from ..ffi.errors import TVMValueError
from ..runtime.module import LibraryModule

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

    def save(self, file_name: str | os.PathLike[str], fmt: str = "") -> None:
        """Save the C source (``.c``, or ``fmt="c"``) or the shared object (anything else)."""
        if fmt == "c" or str(file_name).endswith(".c"):
            Path(file_name).write_text(self._source)
        else:
            shutil.copyfile(self.path, file_name)
