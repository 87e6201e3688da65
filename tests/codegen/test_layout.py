"""The code generator's backends sit in one folder each (``c/``, ``llvm/``) and neither imports
the other; the modules they share (``abi.py`` and its neighbours) import neither backend.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytvm.codegen

CODEGEN = Path(pytvm.codegen.__file__).parent
BACKENDS = ("c", "llvm")


def _imported_parts(path: Path, root: Path) -> list[tuple[int, str]]:
    """``(line, first part under pytvm.codegen)`` of every import in ``path``, lazy and relative
    ones included.
    """
    package = ["pytvm", "codegen", *path.parent.relative_to(root).parts]
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                base = node.module or ""
            else:
                up = package[: len(package) - (node.level - 1)]
                base = ".".join([*up, *([node.module] if node.module else [])])
            names = [base] + [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        parts = {n.split(".")[2] for n in names if n.startswith("pytvm.codegen.")}
        found += [(node.lineno, part) for part in sorted(parts)]
    return sorted(found)


def crossing_imports(root: Path) -> list[str]:
    """Every import of a backend folder from the other backend or from a shared module."""
    bad = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if rel.as_posix() == "__init__.py":
            continue  # the package's public names come from the backends
        owner = rel.parts[0] if len(rel.parts) > 1 else None
        for line, part in _imported_parts(path, root):
            if part in BACKENDS and part != owner:
                bad.append(f"{rel.as_posix()}:{line} imports pytvm.codegen.{part}")
    return bad


def test_backends_import_neither_each_other_nor_from_shared_modules() -> None:
    assert crossing_imports(CODEGEN) == []


def test_each_backend_has_its_own_folder() -> None:
    flat = sorted(p.name for p in CODEGEN.glob("*.py") if p.name.startswith(("c_", "llvm_")))
    assert flat == []
    assert all((CODEGEN / backend / "module.py").is_file() for backend in BACKENDS)


def test_the_check_sees_relative_absolute_and_lazy_crossings(tmp_path: Path) -> None:
    for backend in BACKENDS:
        (tmp_path / backend).mkdir()
    (tmp_path / "__init__.py").write_text("from .c.module import codegen_c\n")
    (tmp_path / "abi.py").write_text("def f():\n    from .llvm import types\n")
    (tmp_path / "c" / "module.py").write_text("from ..abi import CPU_DEVICE\nfrom . import expr\n")
    (tmp_path / "llvm" / "packed.py").write_text(
        "from ..c.types import c_scalar_type\nimport pytvm.codegen.c.module\nfrom . import types\n"
    )
    assert crossing_imports(tmp_path) == [
        "abi.py:2 imports pytvm.codegen.llvm",
        "llvm/packed.py:1 imports pytvm.codegen.c",
        "llvm/packed.py:2 imports pytvm.codegen.c",
    ]
