"""The README's code is the examples' code, and its commands work: each C or Python block of the
sections below is quoted verbatim from the ``examples/`` file the text before it names (those
files run in ``tests/test_examples.py``); the compile line builds ``examples/kernels.c``; the RPC
commands start services that the quoted client code uses (on free ports, not 9190/9090/9091).
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import pytvm
from pytvm.ffi import remove_global_func
from pytvm.rpc.sessions.tracker_client import connect_tracker
from pytvm.rpc.wire.channel import reap
from pytvm.runtime import load_module
from pytvm.testing.rpc import wait_for

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
BIN = Path(sys.executable).parent
KERNELS = "Calling C from Python, from C to Python"
RPC = "Remote devices over RPC"
MICRO = "Models on a microcontroller"
TUNING = "Auto-tuning across a tracker fleet"


def _section(section: str) -> str:
    text = README.read_text()
    return text.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]


def _blocks(section: str) -> list[tuple[str, str, str]]:
    """(prose before it, language, code) of each fenced block under ``## section``."""
    parts = re.split(r"```(\w+)\n(.*?)```", _section(section), flags=re.S)
    return [(parts[i], parts[i + 1], parts[i + 2]) for i in range(0, len(parts) - 1, 3)]


def _code(section: str, lang: str) -> list[str]:
    return [code for _, language, code in _blocks(section) if language == lang]


def _is_excerpt(code: str, source: str) -> bool:
    """Whether ``code`` is a run of consecutive lines of ``source``, indented alike (or not)."""
    want, have = code.rstrip("\n").split("\n"), source.split("\n")
    for start in range(len(have) - len(want) + 1):
        first = have[start]
        if not first.endswith(want[0]) or first[: len(first) - len(want[0])].strip():
            continue
        indent = first[: len(first) - len(want[0])]
        window = have[start : start + len(want)]
        if all(
            h == (indent + w if w else "") or (not w and not h.strip())
            for h, w in zip(window, want)
        ):
            return True
    return False


@pytest.mark.parametrize("section", [KERNELS, RPC, MICRO, TUNING])
def test_readme_code_is_quoted_from_the_example_it_names(section: str) -> None:
    quoted = 0
    for prose, lang, code in _blocks(section):
        if lang == "sh":
            continue  # commands: run by the tests below
        named = re.findall(r"examples/[\w.]+\.(?:py|c)\b", prose)
        assert named, f"README {section!r}: the text before a {lang} block names no example file"
        source = (ROOT / named[-1]).read_text()
        assert _is_excerpt(code, source), (
            f"README {section!r}: this {lang} block is not quoted verbatim from {named[-1]}; "
            f"copy the lines from the example:\n{code}"
        )
        quoted += 1
    assert quoted > 0


def _env() -> dict[str, str]:
    """The environment of an activated venv (``. .venv/bin/activate``)."""
    return {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}


def _run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        argv, cwd=cwd, env=_env(), capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, f"{argv}:\n{result.stdout}\n{result.stderr}"
    return result


def _build_kernels(tmp: Path) -> Path:
    """Run the README's compile line in ``tmp`` (holding a copy of examples/kernels.c)."""
    (compile_line,) = _code(KERNELS, "sh")
    (tmp / "examples").mkdir()
    (tmp / "examples" / "kernels.c").write_text((ROOT / "examples" / "kernels.c").read_text())
    _run(["bash", "-e", "-c", compile_line], tmp)
    return tmp / "kernels.so"


@pytest.mark.needs_cc
def test_the_compile_line_builds_the_example_kernels(tmp_path: Path) -> None:
    mod = load_module(_build_kernels(tmp_path))
    a = pytvm.nd.array(np.arange(4, dtype="float32"))
    c = pytvm.nd.empty((4,), "float32")
    mod["vadd"](a, a, c)
    assert c.numpy().tolist() == [0.0, 2.0, 4.0, 6.0]
    pytvm.register_func("readme.twice", lambda x: 2 * x, override=True)
    try:
        assert mod["call_python"]("readme.twice", 21) == 42
    finally:
        remove_global_func("readme.twice")


def _free_ports(n: int) -> list[int]:
    socks = [socket.create_server(("127.0.0.1", 0)) for _ in range(n)]
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


@pytest.mark.needs_cc
def test_the_rpc_commands_serve_the_example_client(tmp_path: Path) -> None:
    lib = _build_kernels(tmp_path)
    (commands,) = _code(RPC, "sh")
    tracker, leased, direct = _free_ports(3)
    moved = {"9190": str(tracker), "9090": str(leased), "9091": str(direct)}
    commands = re.sub(r"\b(9190|9090|9091)\b", lambda m: moved[m.group(1)], commands)

    services, query = [], None
    try:
        for raw_line in commands.splitlines():
            line = raw_line.split("#", 1)[0].strip()
            if line.endswith("&"):
                argv = line.rstrip("&").split()
                port = int(argv[argv.index("--port") + 1])
                argv += ["--port-end", str(port + 1)]  # exactly that port, or fail
                proc = subprocess.Popen(
                    [str(BIN / argv[0]), *argv[1:]], cwd=tmp_path, stdout=subprocess.PIPE, text=True
                )
                services.append(proc)
                assert proc.stdout is not None and "listening on" in proc.stdout.readline()
            elif line:
                query = _run(["bash", "-e", "-c", line], tmp_path)
        assert query is not None and "Server List" in query.stdout

        def registered() -> bool:
            with connect_tracker("127.0.0.1", tracker) as t:
                return "board" in t.text_summary()

        wait_for(registered, "the leased server to register with the tracker", timeout=30)
        # the README's client code is the body of the example's use(): run it on these services
        example = ROOT / "examples" / "02_rpc_server_and_tracker.py"
        use = f"runpy.run_path({str(example)!r})['use']({tracker}, {direct}, {str(lib)!r})"
        client = f"import runpy\n{use}\n"
        out = _run([sys.executable, "-c", client], tmp_path).stdout
        assert "remote vadd(a, a, a) -> [ 0.  2.  4." in out and "nested: [0 1 2]" in out, out
    finally:
        for proc in services:
            reap(proc, timeout=10, terminate=True)
