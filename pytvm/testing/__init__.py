"""Helpers for pytvm's own tests: compile C sources against pytvm's headers."""

from __future__ import annotations

from pathlib import Path

from ..ffi import libinfo

__all__ = ["compile_c"]


def compile_c(source: str, workdir: Path, name: str = "lib") -> Path:
    """Compile ``source`` into ``workdir/<name>.so``, warnings as errors."""
    src = workdir / f"{name}.c"
    src.write_text(source)
    return libinfo.compile_shared([src], workdir / f"{name}.so", ["-Wall", "-Werror"])
