"""The RPC package's three subpackages import in one direction only: ``wire`` (bytes between
peers) below ``sessions`` (what a client holds, the hops a request crosses) below ``services``
(server, tracker, proxy); and every public name stays importable from ``pytvm.rpc`` itself.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytvm.rpc

RPC = Path(pytvm.rpc.__file__).parent
ORDER = {"wire": 0, "sessions": 1, "services": 2}


def _imported_rpc_parts(path: Path) -> list[tuple[int, str]]:
    """``(line, subpackage)`` of every import in ``path`` that names a module of the RPC
    package, lazy ones and relative ones included.
    """
    sub = path.parent.name
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                base = node.module or ""
            else:  # relative to pytvm.rpc.<sub>
                up = ["pytvm", "rpc", sub][: 3 - (node.level - 1)]
                base = ".".join([*up, *([node.module] if node.module else [])])
            names = [base] + [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        parts = [name.split(".") for name in names]
        subs = {p[2] for p in parts if p[:2] == ["pytvm", "rpc"] and len(p) > 2 and p[2] in ORDER}
        found += [(node.lineno, target) for target in sorted(subs)]
    return sorted(found)


def upward_imports(root: Path) -> list[str]:
    """Every import in ``root``'s subpackages of a subpackage ranked above the importer's."""
    bad = []
    for sub, rank in ORDER.items():
        for path in sorted((root / sub).glob("*.py")):
            for line, target in _imported_rpc_parts(path):
                if ORDER[target] > rank:
                    bad.append(f"{sub}/{path.name}:{line} imports pytvm.rpc.{target}")
    return bad


def test_subpackages_import_only_downward() -> None:
    assert upward_imports(RPC) == []


def test_the_check_sees_relative_absolute_and_lazy_upward_imports(tmp_path: Path) -> None:
    for sub in ORDER:
        (tmp_path / sub).mkdir()
    (tmp_path / "wire" / "a.py").write_text(
        "from ..sessions.endpoint import Endpoint\ndef f():\n    import pytvm.rpc.services.server\n"
    )
    (tmp_path / "sessions" / "b.py").write_text(
        "from ..wire import protocol\nfrom ..services import tracker\n"
    )
    (tmp_path / "services" / "c.py").write_text("from ..sessions.client import connect\n")
    assert upward_imports(tmp_path) == [
        "wire/a.py:1 imports pytvm.rpc.sessions",
        "wire/a.py:3 imports pytvm.rpc.services",
        "sessions/b.py:2 imports pytvm.rpc.services",
    ]


def test_every_public_name_imports_from_the_package() -> None:
    package = importlib.import_module("pytvm.rpc")
    missing = [name for name in package.__all__ if getattr(package, name, None) is None]
    assert missing == []
    assert {"Server", "Tracker", "Proxy", "connect_tracker", "Endpoint"} <= set(package.__all__)
