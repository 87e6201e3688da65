"""``Launcher``: set up a board, start its RPC server under a tracker key, open sessions to its
accelerator (seed 000's ``HexagonLauncher``).

File transfer and the remote shell sit behind :class:`Shell`: :class:`LocalShell` runs the
board on this machine, :class:`AdbShell` on an Android phone over ``adb``.
"""

from __future__ import annotations

import posixpath
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...ffi.device import Device
from ...ffi.errors import TVMOSError, TVMValueError
from ...rpc.sessions.client import RPCSession
from ...rpc.wire.channel import reap
from .session import CONSTRUCTOR

__all__ = ["AcceleratorSession", "AdbShell", "Launcher", "LocalShell", "Shell"]


class Shell:
    """Where the board runs: copy files there, start commands there."""

    def push(self, src: str, dst: str) -> None:
        """Copy the local file ``src`` to the board path ``dst``."""
        raise NotImplementedError

    def start(self, argv: Sequence[str], cwd: str) -> subprocess.Popen[str]:
        """Start ``argv`` on the board in ``cwd``; its stdout is readable text."""
        raise NotImplementedError


class LocalShell(Shell):
    """The board is this machine (the emulator setup)."""

    def push(self, src: str, dst: str) -> None:
        """Copy ``src`` to ``dst`` on this machine, creating its directory."""
        Path(dst).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)

    def start(self, argv: Sequence[str], cwd: str) -> subprocess.Popen[str]:
        """Start ``argv`` on this machine in ``cwd``."""
        return subprocess.Popen(list(argv), cwd=cwd, stdout=subprocess.PIPE, text=True)


class AdbShell(Shell):
    """An Android board reached with ``adb -s <serial>``."""

    def __init__(self, serial: str, adb: str = "adb") -> None:
        self.prefix = [adb, "-s", serial]

    def push(self, src: str, dst: str) -> None:
        """Copy ``src`` to the phone path ``dst`` with ``adb push``."""
        subprocess.run([*self.prefix, "push", src, dst], check=True, capture_output=True)

    def start(self, argv: Sequence[str], cwd: str) -> subprocess.Popen[str]:
        """Start ``argv`` on the phone in ``cwd`` with ``adb shell``."""
        command = f"cd {cwd} && " + " ".join(argv)
        return subprocess.Popen([*self.prefix, "shell", command], stdout=subprocess.PIPE, text=True)


@dataclass
class AcceleratorSession:
    """An RPC session to the accelerator behind the board; ``device`` is its hexagon device."""

    rpc: RPCSession
    device: Device

    def get_function(self, name: str) -> Any:
        """A function registered on the accelerator."""
        return self.rpc.get_function(name)

    def system_lib(self) -> Any:
        """The accelerator's system library: the kernels linked into it (``system_lib``)."""
        return self.rpc.system_lib()

    def close(self) -> None:
        """Close the session (the board server goes on serving)."""
        self.rpc.close()

    def __enter__(self) -> AcceleratorSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Launcher:
    """Drive a board: ``upload``, ``start_server``, ``create_session``, ``stop_server``.

    ``rpc_info`` holds ``rpc_tracker_host``, ``rpc_tracker_port``, ``device_key`` and
    optionally ``rpc_server_port`` (default 0: any free port) and ``system_lib`` (board paths of
    C kernel sources, e.g. uploaded with :meth:`upload`, linked into the emulator).
    """

    def __init__(
        self, workspace: str, rpc_info: dict[str, Any], shell: Shell | None = None
    ) -> None:
        missing = {"rpc_tracker_host", "rpc_tracker_port", "device_key"} - set(rpc_info)
        if missing:
            raise TVMValueError(f"rpc_info lacks {sorted(missing)}")
        self.workspace = workspace
        self.rpc_info = dict(rpc_info)
        self.shell = shell or LocalShell()
        self._server: subprocess.Popen[str] | None = None

    def upload(self, src: str, name: str) -> str:
        """Copy ``src`` into the board workspace as ``name``; returns the board path."""
        dst = posixpath.join(self.workspace, name)  # a board path: POSIX on every board
        self.shell.push(src, dst)
        return dst

    def start_server(self) -> int:
        """Start the board's RPC server registered with the tracker; returns its port."""
        if self._server is not None:
            raise TVMOSError("the board server is already running")
        info = self.rpc_info
        Path(self.workspace).mkdir(parents=True, exist_ok=True)
        argv = [
            sys.executable,
            "-m",
            "pytvm.contrib.hexagon.board",
            "--port",
            str(info.get("rpc_server_port", 0)),
            "--port-end",
            str(int(info.get("rpc_server_port", 0)) + 100),
            "--tracker",
            f"{info['rpc_tracker_host']}:{info['rpc_tracker_port']}",
            "--key",
            str(info["device_key"]),
        ]
        for src in info.get("system_lib", ()):
            argv += ["--system-lib", str(src)]
        proc = self.shell.start(argv, self.workspace)
        banner = proc.stdout.readline() if proc.stdout is not None else ""
        if "listening on" not in banner:
            proc.kill()
            proc.wait()
            raise TVMOSError(f"the board server did not start: {banner!r}")
        self._server = proc
        return int(banner.rsplit(":", 1)[1])

    def create_session(
        self, session_name: str = "hexagon-rpc", stack_size: int = 1 << 14
    ) -> AcceleratorSession:
        """Request the board through the tracker with the accelerator session constructor."""
        from ...rpc.sessions.tracker_client import connect_tracker

        info = self.rpc_info
        with connect_tracker(str(info["rpc_tracker_host"]), int(info["rpc_tracker_port"])) as t:
            sess = t.request(
                str(info["device_key"]),
                session_constructor_args=[CONSTRUCTOR, session_name, stack_size],
            )
        return AcceleratorSession(sess, sess.hexagon(0))

    def stop_server(self) -> None:
        """Stop the board server and wait for it (nothing is left running)."""
        proc, self._server = self._server, None
        if proc is None:
            return
        reap(proc, timeout=10, terminate=True)
