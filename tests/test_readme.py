"""The README's examples run as written: the kernel source, its compile line and the Python that
loads it; the RPC commands and the Python that uses them (on free ports, not 9190/9090/9091)."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from pytvm.rpc.channel import reap
from pytvm.rpc.tracker_client import connect_tracker
from pytvm.testing.rpc import wait_for

README = Path(__file__).resolve().parents[1] / "README.md"
BIN = Path(sys.executable).parent


def _blocks(section: str) -> list[tuple[str, str]]:
    """(language, code) of each fenced block under the ``## section`` heading."""
    text = README.read_text()
    body = text.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```(\w+)\n(.*?)```", body, flags=re.S)


def _env() -> dict[str, str]:
    """The environment of an activated venv (``. .venv/bin/activate``)."""
    return {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}


def _run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(argv, cwd=cwd, env=_env(), capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, f"{argv}:\n{result.stdout}\n{result.stderr}"
    return result


def _build_kernels(tmp: Path) -> None:
    (c_lang, source), (sh, compile_line), _ = _blocks("Calling C from Python, from C to Python")
    assert (c_lang, sh) == ("c", "sh")
    (tmp / "kernels.c").write_text(source)
    _run(["bash", "-e", "-c", compile_line], tmp)


@pytest.mark.needs_cc
def test_the_kernel_example_compiles_and_runs(tmp_path: Path) -> None:
    _build_kernels(tmp_path)
    _, _, (lang, code) = _blocks("Calling C from Python, from C to Python")
    assert lang == "python"
    check = "\nassert c.numpy().tolist() == [0.0, 2.0, 4.0, 6.0], c.numpy()\n"
    _run([sys.executable, "-c", code + check], tmp_path)


def _free_ports(n: int) -> list[int]:
    socks = [socket.create_server(("127.0.0.1", 0)) for _ in range(n)]
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


@pytest.mark.needs_cc
def test_the_rpc_example_runs_against_the_servers_it_starts(tmp_path: Path) -> None:
    _build_kernels(tmp_path)
    (sh, commands), (lang, code) = _blocks("Remote devices over RPC")
    assert (sh, lang) == ("sh", "python")
    tracker, leased, direct = _free_ports(3)
    moved = {"9190": str(tracker), "9090": str(leased), "9091": str(direct)}

    def on_free_ports(text: str) -> str:
        return re.sub(r"\b(9190|9090|9091)\b", lambda m: moved[m.group(1)], text)

    services, query = [], None
    try:
        for line in on_free_ports(commands).splitlines():
            line = line.split("#", 1)[0].strip()
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
        _run([sys.executable, "-c", on_free_ports(code)], tmp_path)
    finally:
        for proc in services:
            reap(proc, timeout=10, terminate=True)
