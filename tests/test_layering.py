"""Layering rules of STYLE.md section 1, checked on every import in the package source, and
the naming rule of DESIGN.md: a top-level name of ``pytvm`` is a module or a function, never both.

Naming rule, for the next clash: where TVM has a function at the top (``tvm.hexagon(0)``,
``tvm.build(...)``), the function keeps the name and its package lives elsewhere, where TVM keeps
it: the accelerator package is ``pytvm.contrib.hexagon``, and the compiler driver behind the
``pytvm.build`` function will be the package ``pytvm.driver``, never ``pytvm/build/``.
:func:`find_name_clashes` checks it.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

PACKAGE = "pytvm"

# Rank of each layer, lowest first (STYLE.md section 1); a module imports only its own rank or
# lower.
LAYERS: dict[str, int] = {
    "ffi": 0,
    "runtime": 1,
    "rpc": 2,
    "crt": 3,
    "contrib": 4,  # the accelerator path (pytvm.contrib.hexagon), above the C runtime
    "tir": 5,
    "te": 6,
    "topi": 7,
    "target": 8,
    "codegen": 8,
    "driver": 9,  # the package behind the pytvm.build / pytvm.lower functions
    "graph": 10,
    "frontend": 10,
    "cli": 11,
    "viz": 11,
}
COMPILER_LAYERS = frozenset(
    {"tir", "te", "topi", "target", "codegen", "driver", "graph", "frontend"}
)
DEPLOY_LAYERS = frozenset({"runtime", "rpc"})  # never import a compiler layer
TESTING = "testing"

# The facade: the package root and its top-level modules. As importers they are exempt;
# as importees they rank with the tools, so no layer below the tools depends on them.
FACADE = "facade"
FACADE_MODULES = frozenset({"__init__", "__main__", "nd", "demo", "error"})
FACADE_RANK = 11

REPO_ROOT = Path(__file__).resolve().parents[1]


def _module_name(path: Path, package_root: Path) -> tuple[str, bool]:
    """Return the dotted module name of ``path`` and whether it is a package ``__init__``."""
    parts = [package_root.name, *path.relative_to(package_root).with_suffix("").parts]
    if parts[-1] == "__init__":
        return ".".join(parts[:-1]), True
    return ".".join(parts), False


def _resolve_relative(module: str, is_package: bool, level: int, target: str | None) -> str:
    base = module.split(".") if is_package else module.split(".")[:-1]
    if level - 1 > len(base) - 1:
        raise ValueError(f"relative import beyond the top package in {module}")
    base = base[: len(base) - (level - 1)]
    return ".".join([*base, target] if target else base)


def _imports(tree: ast.AST, module: str, is_package: bool) -> Iterator[tuple[int, str, bool]]:
    """Yield ``(line, module, may_be_attribute)`` for every import, lazy ones included."""
    root = module.split(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, False
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = _resolve_relative(module, is_package, node.level, node.module)
            if base != root:
                yield node.lineno, base, False
                continue
            # ``from pytvm import graph`` depends on ``pytvm.graph``, a module or a facade name.
            for alias in node.names:
                if alias.name == "*":
                    yield node.lineno, base, False
                else:
                    yield node.lineno, f"{base}.{alias.name}", True
        elif isinstance(node, ast.Call) and _is_dynamic_import(node.func):
            arg = node.args[0] if node.args else None
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                yield node.lineno, arg.value, False


def _is_dynamic_import(func: ast.expr) -> bool:
    if isinstance(func, ast.Name):
        return func.id in {"__import__", "import_module"}
    return isinstance(func, ast.Attribute) and func.attr == "import_module"


def _layer_of(module: str, package_root: Path, may_be_attribute: bool = False) -> str | None:
    """Return the layer of a ``pytvm`` module: a LAYERS key, TESTING, FACADE or its unknown name.

    Returns None for modules outside the package.
    """
    parts = module.split(".")
    if parts[0] != package_root.name:
        return None
    if len(parts) == 1:
        return FACADE
    head = parts[1]
    if head in LAYERS or head == TESTING:
        return head
    if head in FACADE_MODULES:
        return FACADE
    if may_be_attribute:
        exists = (package_root / head).is_dir() or (package_root / f"{head}.py").is_file()
        if not exists:
            return FACADE  # ``from pytvm import __version__``: a name defined by the facade
    return head


def _rank(layer: str) -> int:
    return FACADE_RANK if layer == FACADE else LAYERS[layer]


def find_violations(package_root: Path) -> list[str]:
    """Check every ``.py`` file under ``package_root`` and return one message per violation."""
    violations: list[str] = []
    for path in sorted(package_root.rglob("*.py")):
        rel = path.relative_to(package_root.parent).as_posix()
        module, is_package = _module_name(path, package_root)
        src = _layer_of(module, package_root)
        assert src is not None
        exempt = src in (FACADE, TESTING)
        if not exempt and src not in LAYERS:
            violations.append(f"{rel}: module of unknown layer {src!r} (add it to LAYERS)")
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for line, target, may_be_attribute in sorted(_imports(tree, module, is_package)):
            dst = _layer_of(target, package_root, may_be_attribute)
            if dst is None:
                continue
            where = f"{rel}:{line} imports {target}"
            if dst == TESTING:
                if src != TESTING:
                    violations.append(f"{where} (only tests import {package_root.name}.{TESTING})")
            elif dst != FACADE and dst not in LAYERS:
                violations.append(f"{where} (unknown layer {dst!r}; add it to LAYERS)")
            elif exempt:
                continue
            elif _rank(dst) > _rank(src):
                violations.append(f"{where} (layer {dst}={_rank(dst)} > layer {src}={_rank(src)})")
    return violations


def find_name_clashes(package: ModuleType) -> list[str]:
    """Names of ``package`` that are both a function (any non-module callable) and a submodule.

    Every submodule is imported first, so a submodule that replaces a function of the same name
    on import (or a function that hides a submodule) is caught either way.
    """
    names = {
        info.name
        for info in pkgutil.iter_modules(package.__path__)
        if not info.name.startswith("__")  # __main__ runs the command line on import
    }
    functions: dict[str, object] = {}
    for name in sorted(names):
        value = package.__dict__.get(name)
        if callable(value) and not isinstance(value, ModuleType):
            functions[name] = value
    for name in sorted(names):
        importlib.import_module(f"{package.__name__}.{name}")
    clashes = []
    for name in sorted(names):
        value = package.__dict__.get(name)
        if name in functions or not isinstance(value, ModuleType):
            clashes.append(
                f"{package.__name__}.{name} is a function and a module; keep the function and "
                "move the package (as pytvm.contrib.hexagon beside pytvm.hexagon())"
            )
    return clashes


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / PACKAGE / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root / PACKAGE


def test_package_imports_only_downward() -> None:
    violations = find_violations(REPO_ROOT / PACKAGE)
    assert not violations, "layering violations:\n" + "\n".join(violations)


def test_deploy_layers_rank_below_every_compiler_layer() -> None:
    # The rank check then also enforces "runtime and rpc never import the compiler".
    assert max(LAYERS[name] for name in DEPLOY_LAYERS) < min(LAYERS[n] for n in COMPILER_LAYERS)


def test_checker_reports_lazy_upward_import(tmp_path: Path) -> None:
    root = _write(
        tmp_path,
        {
            "__init__.py": "",
            "runtime/__init__.py": "",
            "runtime/executor.py": "def run():\n    import pytvm.graph\n    return pytvm.graph\n",
            "graph/__init__.py": "",
        },
    )
    assert find_violations(root) == [
        "pytvm/runtime/executor.py:2 imports pytvm.graph (layer graph=10 > layer runtime=1)"
    ]


def test_checker_resolves_relative_and_from_imports(tmp_path: Path) -> None:
    root = _write(
        tmp_path,
        {
            "__init__.py": "",
            "ffi/__init__.py": "from ..runtime import ndarray\n",
            "runtime/__init__.py": "from . import ndarray\nfrom .. import ffi\n",
            "runtime/ndarray.py": "from pytvm import tir\n",
            "rpc/__init__.py": "from .. import __version__\n",
            "rpc/server.py": "import importlib\nimportlib.import_module('pytvm.te')\n",
            "tir/__init__.py": "",
        },
    )
    assert find_violations(root) == [
        "pytvm/ffi/__init__.py:1 imports pytvm.runtime (layer runtime=1 > layer ffi=0)",
        "pytvm/rpc/__init__.py:1 imports pytvm.__version__ (layer facade=11 > layer rpc=2)",
        "pytvm/rpc/server.py:2 imports pytvm.te (layer te=6 > layer rpc=2)",
        "pytvm/runtime/ndarray.py:1 imports pytvm.tir (layer tir=5 > layer runtime=1)",
    ]


def test_checker_rejects_unknown_layers_and_testing_imports(tmp_path: Path) -> None:
    root = _write(
        tmp_path,
        {
            "__init__.py": "",
            "nd.py": "import pytvm.testing\n",
            "testing/__init__.py": "import pytvm.graph\n",
            "cli/run.py": "from pytvm.magic import wand\n",
            "magic/__init__.py": "",
        },
    )
    assert find_violations(root) == [
        "pytvm/cli/run.py:1 imports pytvm.magic (unknown layer 'magic'; add it to LAYERS)",
        "pytvm/magic/__init__.py: module of unknown layer 'magic' (add it to LAYERS)",
        "pytvm/nd.py:1 imports pytvm.testing (only tests import pytvm.testing)",
    ]


def test_no_top_level_name_is_both_a_function_and_a_module() -> None:
    import pytvm

    assert find_name_clashes(pytvm) == []


def test_clash_checker_reports_a_function_named_like_a_subpackage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "clashpkg"
    (root / "build").mkdir(parents=True)
    (root / "driver").mkdir()
    (root / "__init__.py").write_text("def build():\n    pass\n\n\nfrom . import driver\n")
    (root / "build" / "__init__.py").write_text("")
    (root / "driver" / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        package = importlib.import_module("clashpkg")
        assert find_name_clashes(package) == [
            "clashpkg.build is a function and a module; keep the function and move the package "
            "(as pytvm.contrib.hexagon beside pytvm.hexagon())"
        ]
    finally:
        for name in [n for n in sys.modules if n == "clashpkg" or n.startswith("clashpkg.")]:
            del sys.modules[name]
