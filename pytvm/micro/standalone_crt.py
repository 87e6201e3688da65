"""Where the C runtime's sources live, and the file list of its standalone copy (MLF ``runtime/``).

TVM's ``get_standalone_crt_dir()`` names a built copy of the CRT beside ``libtvm``; pytvm ships
the sources in the package: ``pytvm/src/crt`` (its Makefile builds it) with the packed-function
ABI headers in ``pytvm/include``. :func:`standalone_crt_files` lists the files of a copy laid
out as ``include/`` (both header trees) and ``src/crt/`` (the sources and Makefile, no tests),
which is what Model Library Format's ``runtime/`` holds.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

__all__ = ["get_standalone_crt_dir", "standalone_crt_files"]

_PACKAGE = Path(__file__).resolve().parent.parent
#: File names a copy of the CRT takes (sources, headers, make fragments, docs).
_KEEP_SUFFIXES = (".c", ".h", ".mk", ".ld", ".s", ".S", ".md")


def get_standalone_crt_dir() -> str:
    """The C runtime's source folder (TVM's name): ``pytvm/src/crt``, holding ``Makefile``,
    ``include/pytvm_crt/`` and the sources; the ABI headers are in ``../../include``.
    """
    return str(_PACKAGE / "src" / "crt")


def _kept(path: Path, root: Path) -> bool:
    rel = path.relative_to(root).parts
    if "tests" in rel or any(part.startswith((".", "__")) for part in rel):
        return False
    return path.is_file() and (path.name == "Makefile" or path.suffix in _KEEP_SUFFIXES)


def standalone_crt_files() -> Iterator[tuple[str, Path]]:
    """``(relative path, source file)`` of a standalone CRT copy, in a stable order:
    ``include/<header>`` from ``pytvm/include`` and ``src/crt/include``, and ``src/crt/<file>``.
    """
    crt = Path(get_standalone_crt_dir())
    for root, prefix in ((_PACKAGE / "include", "include"), (crt / "include", "include")):
        for path in sorted(root.rglob("*")):
            if _kept(path, root):
                yield f"{prefix}/{path.relative_to(root).as_posix()}", path
    for path in sorted(crt.rglob("*")):
        if _kept(path, crt):
            yield f"src/crt/{path.relative_to(crt).as_posix()}", path
