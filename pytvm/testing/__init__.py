"""Helpers for pytvm's own tests: compile C sources against pytvm's headers."""

from __future__ import annotations

import subprocess
from pathlib import Path

from ..ffi import libinfo

__all__ = ["compile_c"]


def compile_c(source: str, workdir: Path, name: str = "lib") -> Path:
    """Compile ``source`` into ``workdir/<name>.so`` with the system C compiler."""
    cc = libinfo.find_cc()
    if cc is None:
        raise RuntimeError("no C compiler")
    src = workdir / f"{name}.c"
    src.write_text(source)
    out = workdir / f"{name}.so"
    cmd = [
        cc,
        "-O2",
        "-std=c11",
        "-Wall",
        "-Werror",
        "-shared",
        "-fPIC",
        f"-I{libinfo.include_dir()}",
        str(src),
        "-o",
        str(out),
        "-lpthread",
    ]
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"compiling {src} failed:\n{result.stderr}")
    return out
