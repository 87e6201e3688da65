"""TVM's module paths import from pytvm: every module of TVM 0.27's ``python/tvm/rpc/`` (read from
the installed apache-tvm, so the list cannot drift), ``tvm/exec``'s RPC commands, and the
``support``/``contrib`` paths of ``tempdir`` and ``cc``; with the names TVM's tests and tutorials
use. The modules and names pytvm deliberately leaves out are listed here with the reason, and the
test fails if one of them appears or if anything else is missing.

The ``python -m pytvm.exec.*`` commands run as real processes: a tracker, a server registered
with it under a key, and a session requested through the tracker.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytvm import rpc

REPO_ROOT = Path(__file__).resolve().parents[1]

#: TVM 0.27 ``tvm.rpc`` modules pytvm does not provide, and why.
NOT_PROVIDED = {
    "rpc.server_ios_launcher": "launches TVM's iOS RPC app on an Xcode simulator; pytvm has no "
    "iOS app",
    "rpc.tornado_util": "TVM's tornado TCP handler base class; pytvm's tracker and proxy run on "
    "their own selectors event loop, without tornado",
}

#: Public names of TVM's modules that pytvm's module of the same path leaves out, and why.
NAMES_NOT_PROVIDED = {
    "rpc.base": {"get_addr_family": "pytvm's sockets have no such helper"},
    "rpc.server": {
        "PopenRPCServerState": "state of TVM's server in a Popen worker; pytvm's Server runs "
        "its own worker processes",
    },
    "rpc.proxy": dict.fromkeys(
        (
            "ForwardHandler",
            "MIME_MAP",
            "PopenProxyServerState",
            "ProxyServerHandler",
            "RequestHandler",
            "TCPHandler",
            "WebSocketHandler",
            "websocket_proxy_server",
        ),
        "TVM's tornado HTTP/WebSocket front end; pytvm's proxy relays TCP sessions only",
    ),
    "rpc.tracker": {
        **dict.fromkeys(
            ("PopenTrackerServerState", "TCPEventHandler", "TrackerServerHandler"),
            "internals of TVM's tornado tracker",
        ),
        **dict.fromkeys(
            ("Scheduler", "PriorityScheduler"),
            "pytvm's scheduler (rpc/services/_tracker_scheduler.py) has another interface",
        ),
    },
    "support.utils": {
        "DirectoryCreatedPastAtExit": "pytvm's tempdir works after the exit clean-up too",
    },
}

#: Names TVM's own tests and tutorials use, per module path; each must exist in TVM and pytvm.
USED_NAMES = {
    "rpc": [
        "Server",
        "connect",
        "connect_tracker",
        "RPCSession",
        "LocalSession",
        "PopenSession",
        "TrackerSession",
        "with_minrpc",
    ],
    "rpc.tracker": ["Tracker"],
    "rpc.proxy": ["Proxy"],
    "rpc.server": ["Server", "_server_env"],
    "rpc.client": [
        "connect",
        "connect_tracker",
        "RPCSession",
        "LocalSession",
        "PopenSession",
        "TrackerSession",
    ],
    "rpc.base": ["TrackerCode", "RPC_MAGIC", "RPC_TRACKER_MAGIC", "RPC_SESS_MASK"],
    "rpc.minrpc": ["with_minrpc"],
    "support.utils": ["tempdir", "TempDirectory"],
    "support.cc": ["create_shared", "create_executable", "create_staticlib", "cross_compiler"],
}
#: TVM 0.18's paths of the same modules.
OLD_PATHS = {"contrib.utils": "support.utils", "contrib.cc": "support.cc"}
EXEC_COMMANDS = ["exec.rpc_server", "exec.rpc_tracker", "exec.rpc_proxy", "exec.query_rpc_tracker"]


def _tvm_dir() -> Path:
    spec = importlib.util.find_spec("tvm")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("apache-tvm (the reference) is not installed")
    return Path(next(iter(spec.submodule_search_locations)))


def tvm_module_paths() -> list[str]:
    """Every module path of TVM's ``rpc`` package, its exec RPC commands, and the support paths
    of ``utils`` and ``cc``, relative to the package (``rpc.tracker``).
    """
    root = _tvm_dir()
    rpc_modules = ["rpc"] + [f"rpc.{p.stem}" for p in (root / "rpc").glob("*.py")]
    commands = [f"exec.{p.stem}" for p in (root / "exec").glob("*.py")]
    commands = [c for c in commands if c.startswith("exec.rpc_") or c.endswith("_rpc_tracker")]
    support = [
        p for p in ("support.utils", "support.cc") if (root / f"{p.replace('.', '/')}.py").is_file()
    ]
    return sorted({*rpc_modules, *commands, *support} - {"rpc.__init__"})


def test_every_tvm_module_path_imports_from_pytvm() -> None:
    expected = sorted(set(tvm_module_paths()) - set(NOT_PROVIDED) | set(OLD_PATHS))
    assert set(EXEC_COMMANDS) <= set(expected)
    missing = []
    for path in expected:
        try:
            importlib.import_module(f"pytvm.{path}")
        except ImportError as err:
            missing.append(f"pytvm.{path}: {err}")
    assert missing == []


def test_modules_left_out_are_tvm_modules_pytvm_does_not_have() -> None:
    paths = tvm_module_paths()
    for path in NOT_PROVIDED:
        assert path in paths, f"{path} is no longer a TVM module: drop it from NOT_PROVIDED"
        assert importlib.util.find_spec(f"pytvm.{path}") is None, f"pytvm.{path} now exists"


def _public_names(module: types.ModuleType) -> set[str]:
    """Names ``module`` defines itself: its classes and functions, and UPPER_CASE constants."""
    names = set()
    for name, value in vars(module).items():
        if name.startswith("_") or isinstance(value, types.ModuleType):
            continue
        if inspect.isclass(value) or inspect.isfunction(value):
            if value.__module__ == module.__name__:
                names.add(name)
        elif name.isupper():
            names.add(name)
    return names


@pytest.mark.parametrize("path", sorted(set(USED_NAMES) | set(NAMES_NOT_PROVIDED)))
def test_tvm_names_exist_unless_listed_as_left_out(path: str) -> None:
    if path.startswith("rpc."):
        pytest.importorskip("tornado")  # TVM's rpc.proxy and rpc.tracker import it
    _tvm_dir()
    tvm_module = importlib.import_module(f"tvm.{path}")
    ours = importlib.import_module(f"pytvm.{path}")
    left_out = NAMES_NOT_PROVIDED.get(path, {})
    for name in USED_NAMES.get(path, []):
        assert hasattr(tvm_module, name), f"tvm.{path}.{name} is not TVM's: fix USED_NAMES"
        assert hasattr(ours, name), f"pytvm.{path} lacks {name}"
    tvm_names = _public_names(tvm_module)
    assert set(left_out) <= tvm_names, "NAMES_NOT_PROVIDED lists names TVM no longer has"
    assert {n for n in tvm_names if not hasattr(ours, n)} == set(left_out)


def test_old_paths_re_export_the_new_modules() -> None:
    for old, new in OLD_PATHS.items():
        old_module = importlib.import_module(f"pytvm.{old}")
        new_module = importlib.import_module(f"pytvm.{new}")
        assert old_module.__all__ == new_module.__all__
        assert all(getattr(old_module, n) is getattr(new_module, n) for n in old_module.__all__)


def test_rpc_server_is_the_module_and_Server_the_class() -> None:
    assert isinstance(rpc.server, types.ModuleType)
    assert rpc.server.Server is rpc.Server
    assert inspect.isclass(rpc.Server)
    # TVM's tests call _server_env; it registers a server's functions process-wide (its own
    # runtime.module.loadfile_* confined to the workspace), so it runs in a process of its own.
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import os; from pytvm import rpc; ws = rpc.server._server_env([]); "
            "print(os.path.isdir(ws.path))",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True"
    with pytest.raises(AttributeError, match="no attribute 'no_such_module'"):
        _ = rpc.no_such_module


def test_rpc_testing_registers_the_test_functions() -> None:
    import pytvm
    import pytvm.rpc.testing

    assert pytvm.get_global_func("rpc.test.addone")(41) == 42
    assert pytvm.get_global_func("rpc.test.strcat")("a", 1) == "a:1"


# ------------------------------------------------------------------ python -m pytvm.exec.*


class _Command:
    """``python -m <args>`` in its own process group; its output lines read by a thread."""

    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", *args],
            cwd=REPO_ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def wait_for(self, pattern: str, timeout: float = 60.0) -> re.Match[str]:
        """The first output line matching ``pattern`` (fails after ``timeout`` or at exit)."""
        deadline = time.monotonic() + timeout
        seen = []
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                break
            if line is None:
                break
            seen.append(line)
            found = re.search(pattern, line)
            if found:
                return found
        raise AssertionError(
            f"no line matching {pattern!r} from {self.proc.args!r}:\n{''.join(seen)}"
        )

    def stop(self) -> None:
        """SIGTERM the process group (SIGKILL after 20 s)."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


@pytest.fixture
def exec_tracker() -> Iterator[int]:
    """A ``python -m pytvm.exec.rpc_tracker`` process on 127.0.0.1; yields its port."""
    tracker = _Command("pytvm.exec.rpc_tracker", "--host", "127.0.0.1", "--port", "9190")
    try:
        yield int(tracker.wait_for(r"tracker listening on 127\.0\.0\.1:(\d+)").group(1))
    finally:
        tracker.stop()


def test_exec_server_registers_with_exec_tracker_and_serves_a_session(exec_tracker: int) -> None:
    server = _Command(
        "pytvm.exec.rpc_server",
        "--host",
        "127.0.0.1",
        "--port",
        "9300",
        "--tracker",
        f"127.0.0.1:{exec_tracker}",
        "--key",
        "k",
    )
    try:
        server.wait_for(r"server listening on 127\.0\.0\.1:\d+")
        with rpc.connect_tracker("127.0.0.1", exec_tracker) as tracker:
            deadline = time.monotonic() + 30
            while tracker.summary()["queue_info"].get("k", {}).get("free", 0) < 1:
                assert time.monotonic() < deadline, "the server never registered"
                time.sleep(0.1)
            remote = tracker.request("k", session_timeout=30)
            assert remote.get_function("rpc.test.addone")(1) == 2
        query = subprocess.run(
            [sys.executable, "-m", "pytvm.exec.query_rpc_tracker", "--port", str(exec_tracker)],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert query.returncode == 0, query.stderr
        assert f"Tracker address 127.0.0.1:{exec_tracker}" in query.stdout
        assert "k" in query.stdout
    finally:
        server.stop()


def test_exec_proxy_takes_tvm_options(exec_tracker: int) -> None:
    proxy = _Command(
        "pytvm.exec.rpc_proxy",
        "--port",
        "9400",
        "--web-port",
        "8888",
        "--tracker",
        f"127.0.0.1:{exec_tracker}",
    )
    try:
        proxy.wait_for(r"--web-port ignored: pytvm's proxy has no HTTP/WebSocket server")
        proxy.wait_for(r"proxy listening on 127\.0\.0\.1:\d+")
    finally:
        proxy.stop()


def test_exec_server_needs_a_key_with_a_tracker() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pytvm.exec.rpc_server", "--tracker", "127.0.0.1:9190"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "--key is required with --tracker" in done.stderr
