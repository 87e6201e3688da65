"""Layering rules of STYLE.md section 1, checked on every import in the package source; no import
cycles (DESIGN.md: "no import cycles, inside a layer either"); and the naming rule of DESIGN.md:
a top-level name of ``pytvm`` is a module or a function, never both.

The layer ranks are read from the table in ``docs/architecture.md``, so the document and this
check cannot drift apart.

Cycles: every import is an edge, at module level, inside a function, under ``if TYPE_CHECKING:``
(an annotation-only dependency is the same coupling, kept out of sight) and
``importlib.import_module`` with a literal name. ``from pkg import name`` is an edge to
``pkg.name`` when that is a module, else to ``pkg``. Importing ``pkg.sub`` is an edge to
``pkg.sub`` only: Python runs ``pkg/__init__.py`` first, but counting that would make every
package that re-exports its submodules a cycle; what is forbidden is a submodule importing its
own package by name (``from pytvm.rpc import X`` inside ``pytvm/rpc/server.py``), which is an edge
and is caught. Nothing else is exempt. :func:`find_import_cycles` checks it.

Naming rule, for the next clash: where TVM has a function at the top (``tvm.hexagon(0)``,
``tvm.build(...)``), the function keeps the name and its package lives elsewhere, where TVM keeps
it: the accelerator package is ``pytvm.contrib.hexagon``, and the compiler driver behind the
``pytvm.build`` function will be the package ``pytvm.driver``, never ``pytvm/build/``.
:func:`find_name_clashes` checks it.
"""

from __future__ import annotations

import ast
import importlib
import itertools
import pkgutil
import re
import sys
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from types import ModuleType

import pytest

PACKAGE = "pytvm"
REPO_ROOT = Path(__file__).resolve().parents[1]
ARCHITECTURE_DOC = REPO_ROOT / "docs" / "architecture.md"

# The facade: the package root and its top-level modules. As importers they are exempt;
# as importees they rank where the architecture table puts them (with the tools), so no layer
# below the tools depends on them.
FACADE = "facade"
TESTING = "testing"


def read_layer_table(text: str) -> list[tuple[int, list[str], list[str]]]:
    """Rows of the markdown table headed ``| rank | layer | package | ...``, in order.

    Each row gives ``(rank, layer names, package names)``: the backquoted names of its second
    and third cells. Raises ValueError for a missing table or a malformed row.
    """
    rows: list[tuple[int, list[str], list[str]]] = []
    lines = iter(text.splitlines())
    for line in lines:
        cells = [c.strip().lower() for c in line.strip().strip("|").split("|")]
        if line.lstrip().startswith("|") and cells[:3] == ["rank", "layer", "package"]:
            break
    else:
        raise ValueError("no table headed '| rank | layer | package |' found")
    for line in lines:
        if not line.lstrip().startswith("|"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if set("".join(cells)) <= set("-: "):
            continue  # the header's separator row
        layers = re.findall(r"`([^`]+)`", cells[1]) if len(cells) > 2 else []
        if not cells[0].isdigit() or not layers or not all(n.isidentifier() for n in layers):
            raise ValueError(f"malformed layer row (want '| <rank> | `name`, ... | ...'): {line}")
        rows.append((int(cells[0]), layers, re.findall(r"`([^`]+)`", cells[2])))
    if not rows:
        raise ValueError("the layer table has no rows")
    return rows


_TABLE = read_layer_table(ARCHITECTURE_DOC.read_text(encoding="utf-8"))
# Rank of each layer, lowest first; a module imports only its own rank or lower.
LAYERS: dict[str, int] = {
    name: rank for rank, names, _ in _TABLE for name in names if name != FACADE
}
FACADE_RANK = next(rank for rank, names, _ in _TABLE if FACADE in names)
FACADE_MODULES = frozenset(
    Path(p).stem
    for _, names, packages in _TABLE
    if FACADE in names
    for p in packages
    if "/" not in p
)
# Package roots inside a layer that re-export names of higher layers as the facade does (their
# ``__init__``: ``autotvm/__init__.py`` gives TVM's ``autotvm.LocalBuilder`` over the tuning
# layer): facade modules, loading those names on first use.
FACADE_PACKAGES = frozenset(
    "pytvm." + Path(p).parent.as_posix().replace("/", ".")
    for _, names, packages in _TABLE
    if FACADE in names
    for p in packages
    if "/" in p
)
# Modules of a layer inside another layer's package (``pytvm.autotvm.tuner`` is tuning, above
# ``driver``, in ``autotvm``'s package): the table's dotted names of three parts or more.
SUBLAYERS: dict[str, str] = {
    package: names[0]
    for _, names, packages in _TABLE
    if FACADE not in names
    for package in packages
    if package.count(".") >= 2
}
COMPILER_LAYERS = frozenset(
    {"tir", "te", "topi", "target", "codegen", "driver", "graph", "frontend"}
)
DEPLOY_LAYERS = frozenset({"runtime", "rpc"})  # never import a compiler layer


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
    root = module.split(".", maxsplit=1)[0]
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
    if len(parts) == 1 or module in FACADE_PACKAGES:
        return FACADE
    # the longest dotted prefix the table names as a layer of its own, else the subpackage
    prefixes = (".".join(parts[:d]) for d in range(len(parts), 2, -1))
    head = next((SUBLAYERS[p] for p in prefixes if p in SUBLAYERS), parts[1])
    # TVM's topi.testing (numpy references and helpers for topi's tests) and micro.testing
    # (AOT test runners) rank as testing.
    if head in LAYERS or head == TESTING:
        return TESTING if parts[1:3] in (["topi", TESTING], ["micro", TESTING]) else head
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


def _package_modules(package_root: Path) -> dict[str, tuple[Path, bool]]:
    """Every module of the package by dotted name: its file and whether it is a package."""
    modules = {}
    for path in sorted(package_root.rglob("*.py")):
        name, is_package = _module_name(path, package_root)
        modules[name] = (path, is_package)
    return modules


def _import_edges(
    tree: ast.AST, module: str, is_package: bool, modules: Mapping[str, object]
) -> Iterator[tuple[int, str]]:
    """Yield ``(line, imported module)`` for every import of a module in ``modules``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in modules:
                    yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = _resolve_relative(module, is_package, node.level, node.module)
            for alias in node.names:
                if f"{base}.{alias.name}" in modules:
                    yield node.lineno, f"{base}.{alias.name}"
                elif base in modules:
                    yield node.lineno, base
        elif isinstance(node, ast.Call) and _is_dynamic_import(node.func):
            arg = node.args[0] if node.args else None
            if isinstance(arg, ast.Constant) and arg.value in modules:
                yield node.lineno, str(arg.value)


def import_graph(package_root: Path) -> dict[str, dict[str, str]]:
    """Module -> {imported module: ``file:line`` of its first import}, for the whole package."""
    modules = _package_modules(package_root)
    graph: dict[str, dict[str, str]] = {}
    for module, (path, is_package) in modules.items():
        rel = path.relative_to(package_root.parent).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        edges = graph.setdefault(module, {})
        for line, target in sorted(_import_edges(tree, module, is_package, modules)):
            edges.setdefault(target, f"{rel}:{line}")
    return graph


def strongly_connected(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of ``graph``, each sorted, in reverse topological
    order (a component comes before every component that reaches it).
    """
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(node: str) -> Iterator[str]:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        return iter(sorted(graph.get(node, ())))

    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, visit(root))]
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    work.append((child, visit(child)))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component: list[str] = []
                    while not component or component[-1] != node:
                        component.append(stack.pop())
                        on_stack.discard(component[-1])
                    components.append(sorted(component))
    return components


def _shortest_cycle(graph: Mapping[str, Iterable[str]], start: str, within: set[str]) -> list[str]:
    """The shortest path ``start -> ... -> start`` inside ``within`` (breadth first)."""
    parent: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for child in sorted(graph.get(node, ())):
            if child == start:
                path = [node]
                while path[-1] != start:
                    path.append(parent[path[-1]])
                return [*reversed(path), start]
            if child in within and child not in parent:
                parent[child] = node
                queue.append(child)
    raise AssertionError(f"{start} is on no cycle inside {sorted(within)}")


def find_cycles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """Each cycle of ``graph`` as a path ``[a, b, ..., a]`` starting at its smallest node.

    For every node of every strongly connected component with a cycle (two nodes or more, or
    one importing itself), the shortest cycle through it; duplicates removed, sorted.
    """
    cycles: set[tuple[str, ...]] = set()
    for component in strongly_connected(graph):
        if len(component) == 1 and component[0] not in graph.get(component[0], ()):
            continue
        for node in component:
            path = _shortest_cycle(graph, node, set(component))[:-1]
            first = path.index(min(path))
            rotated = path[first:] + path[:first]
            cycles.add((*rotated, rotated[0]))
    return [list(cycle) for cycle in sorted(cycles)]


def find_import_cycles(package_root: Path) -> list[str]:
    """One message per import cycle in the package: the path and where each import is."""
    graph = import_graph(package_root)
    messages = []
    for cycle in find_cycles(graph):
        where = ", ".join(graph[a][b] for a, b in itertools.pairwise(cycle))
        messages.append(f"{' -> '.join(cycle)} ({where})")
    return messages


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
        "pytvm/rpc/__init__.py:1 imports pytvm.__version__ (layer facade=12 > layer rpc=2)",
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


def test_layer_ranks_follow_the_architecture_table_in_pipeline_order() -> None:
    ranks = [rank for rank, _, _ in _TABLE]
    assert ranks == sorted(ranks), "docs/architecture.md lists the layers lowest first"
    packages = {p.name for p in (REPO_ROOT / PACKAGE).iterdir() if (p / "__init__.py").is_file()}
    assert packages - {TESTING} <= set(LAYERS), "every subpackage has a row in the table"
    assert {"__init__", "__main__"} <= FACADE_MODULES


def test_table_reader_takes_ranks_layers_and_packages() -> None:
    text = (
        "intro\n\n| rank | layer | package | what |\n|---|---|---|---|\n"
        "| 0 | `ffi` | `pytvm.ffi` | types |\n"
        "| 3 | `cli`, `viz` | `a.py`, `b.py` | tools |\n\nend\n"
    )
    assert read_layer_table(text) == [
        (0, ["ffi"], ["pytvm.ffi"]),
        (3, ["cli", "viz"], ["a.py", "b.py"]),
    ]
    with pytest.raises(ValueError, match="malformed layer row"):
        read_layer_table("| rank | layer | package |\n|---|---|---|\n| x | `ffi` | p |\n")
    with pytest.raises(ValueError, match="no table"):
        read_layer_table("| layer | rank |\n")


def test_package_has_no_import_cycles() -> None:
    cycles = find_import_cycles(REPO_ROOT / PACKAGE)
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_cycle_finder_on_a_synthetic_graph() -> None:
    graph = {
        "a": ["b"],
        "b": ["c", "a"],  # a <-> b, and a -> b -> c -> a
        "c": ["a", "d"],
        "d": ["e"],  # d -> e is a chain, not a cycle
        "e": [],
        "f": ["f"],  # a module importing itself
        "g": ["h"],
        "h": ["g"],
    }
    assert strongly_connected(graph) == [["e"], ["d"], ["a", "b", "c"], ["f"], ["g", "h"]]
    assert find_cycles(graph) == [
        ["a", "b", "a"],
        ["a", "b", "c", "a"],
        ["f", "f"],
        ["g", "h", "g"],
    ]
    assert find_cycles({"x": ["y"], "y": ["z"], "z": []}) == []


def test_cycle_check_sees_lazy_type_checking_and_submodule_imports(tmp_path: Path) -> None:
    root = _write(
        tmp_path,
        {
            "__init__.py": "from . import cli, runtime\n",
            "cli/__init__.py": "",
            "cli/main.py": "from pytvm.cli import info\n",
            "cli/info.py": "def main():\n    from pytvm.cli.main import main\n",
            "runtime/__init__.py": "from .ndarray import NDArray\n",
            "runtime/ndarray.py": "from typing import TYPE_CHECKING\n"
            "if TYPE_CHECKING:\n    from .dlpack import x\n",
            "runtime/dlpack.py": "import pytvm.runtime.ndarray\n",
            "rpc/__init__.py": "from .server import Server\n",
            "rpc/server.py": "import importlib\nimportlib.import_module('pytvm.rpc')\n",
            "rpc/client.py": "from pytvm.rpc import server\nfrom pytvm import rpc\n",
        },
    )
    assert find_import_cycles(root) == [
        "pytvm.cli.info -> pytvm.cli.main -> pytvm.cli.info "
        "(pytvm/cli/info.py:2, pytvm/cli/main.py:1)",
        "pytvm.rpc -> pytvm.rpc.server -> pytvm.rpc "
        "(pytvm/rpc/__init__.py:1, pytvm/rpc/server.py:2)",
        "pytvm.runtime.dlpack -> pytvm.runtime.ndarray -> pytvm.runtime.dlpack "
        "(pytvm/runtime/dlpack.py:1, pytvm/runtime/ndarray.py:3)",
    ]


def test_sublayers_and_facade_packages() -> None:
    """A layer inside another's package ranks by the table's dotted name, and the package roots
    that re-export higher layers (``autotvm``'s) are facade modules.
    """
    root = REPO_ROOT / "pytvm"
    assert _layer_of("pytvm.autotvm.tuner.xgboost_tuner", root) == "tuning"
    assert _layer_of("pytvm.autotvm.measure.measure_methods", root) == "tuning"
    assert _layer_of("pytvm.autotvm.measure.measure", root) == "autotvm"
    assert _layer_of("pytvm.autotvm.task.space", root) == "autotvm"
    assert _layer_of("pytvm.autotvm", root) == FACADE
    assert _layer_of("pytvm.autotvm.task", root) == FACADE
    assert LAYERS["tuning"] > LAYERS["driver"] > LAYERS["autotvm"]
