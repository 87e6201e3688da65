"""The C runtime's call graph between its source files has no cycle: for each thing it links (the
device image in both configurations, the ``pytvm-device`` binary), an edge A -> B means A's
object uses a symbol B's object defines (``nm``), and every strongly connected component of
those edges is a single file.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

import pytvm

pytestmark = pytest.mark.needs_cc

CRT_DIR = Path(pytvm.__file__).resolve().parent / "src" / "crt"

#: file -> {file it uses: symbols it uses from there}
Graph = dict[str, dict[str, set[str]]]


def _nm() -> str:
    nm = shutil.which("nm")
    if nm is None:
        pytest.fail("`nm` (binutils) is not on PATH: install binutils")
    return nm


def call_graph(objects: dict[str, Path]) -> Graph:
    """Edges between named objects from their defined and undefined global symbols."""
    defined: dict[str, set[str]] = defaultdict(set)
    used: dict[str, set[str]] = {}
    for name, obj in objects.items():
        out = subprocess.run(
            [_nm(), "-P", "-g", str(obj)], capture_output=True, text=True, check=True
        ).stdout
        used[name] = set()
        for line in out.splitlines():
            symbol, kind = line.split()[:2]
            if kind == "U":
                used[name].add(symbol)
            elif kind in "TDRBCVWG":
                defined[symbol].add(name)
    graph: Graph = {name: defaultdict(set) for name in objects}
    for name, symbols in used.items():
        for symbol in symbols:
            for owner in defined.get(symbol, ()):
                if owner != name:
                    graph[name][owner].add(symbol)
    return graph


def cycles(graph: Graph) -> list[list[str]]:
    """Strongly connected components of more than one file (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in graph.get(node, {}):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def describe(graph: Graph, component: list[str]) -> str:
    """A cycle's files and, for each edge inside it, the symbols that make it."""
    members = set(component)
    edges = [
        f"  {a} -> {b}: {', '.join(sorted(graph[a][b]))}"
        for a in component
        for b in sorted(graph[a])
        if b in members
    ]
    return " <-> ".join(component) + "\n" + "\n".join(edges)


def _objects(folder: Path) -> dict[str, Path]:
    return {
        str(p.relative_to(folder)): p for p in sorted(folder.rglob("*.o")) if p.name != "image.o"
    }


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("crt-graph")
    cmd = [
        "make", "-s", "-j4", "-C", str(CRT_DIR), f"O={out}", "OPT=-O0",
        f"PYTHON={sys.executable}", "pytvm-device", "image-x86-64-full", "image-x86-64-minimal",
    ]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, f"{' '.join(cmd)}:\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}"
    return out


@pytest.mark.parametrize("link", ["image/x86-64-full", "image/x86-64-minimal", "host/device"])
def test_crt_call_graph_has_no_cycle(built: Path, link: str) -> None:
    objects = _objects(built / link)
    if link == "host/device":
        objects.update({f"gen/{p.name}": p for p in (built / "host" / "gen").glob("*.o")})
    assert any(name.startswith("minrpc/") for name in objects), sorted(objects)
    graph = call_graph(objects)
    found = cycles(graph)
    assert not found, f"{link}: call cycles between the CRT's files:\n" + "\n".join(
        describe(graph, c) for c in found
    )
    # the dispatcher reaches the syscalls; the names they share call nothing back
    assert "minrpc/minrpc_syscall.o" in graph["minrpc/minrpc_server.o"]
    assert not graph["minrpc/minrpc_names.o"], graph["minrpc/minrpc_names.o"]


def test_a_call_cycle_is_found_and_named(tmp_path: Path) -> None:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.fail("no C compiler on PATH")
    sources = {
        "a.c": "int b_fn(int);\nint a_fn(int x) { return x > 0 ? b_fn(x - 1) : 0; }\n",
        "b.c": "int a_fn(int);\nint c_fn(void);\nint b_fn(int x) { return a_fn(x) + c_fn(); }\n",
        "c.c": "int c_fn(void) { return 1; }\n",
    }
    objects = {}
    for name, text in sources.items():
        (tmp_path / name).write_text(text)
        obj = tmp_path / name.replace(".c", ".o")
        subprocess.run([cc, "-c", str(tmp_path / name), "-o", str(obj)], check=True)
        objects[obj.name] = obj
    graph = call_graph(objects)
    found = cycles(graph)
    assert found == [["a.o", "b.o"]]
    assert describe(graph, found[0]) == "a.o <-> b.o\n  a.o -> b.o: b_fn\n  b.o -> a.o: a_fn"
