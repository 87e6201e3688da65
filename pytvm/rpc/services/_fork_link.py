"""The RPC server's link to its fork server: starting the process, messages both ways, stopping it.

The fork server (:mod:`.fork_server`) is spawned with ``subprocess`` (fork and exec, safe from a
process with threads) as ``sys.executable -c <start> FD``, in its own session (a terminal's
Ctrl-C goes to the server, which then stops it). Its ``PYTHONPATH`` is the directory this
``pytvm`` package lives in, then this process's ``sys.path`` (the current directory for an empty
entry), so it runs this very ``pytvm`` and the modules of functions registered here import there
too; ``<start>`` drops the current directory that ``-c`` (like ``-m``) puts first (an empty
entry), where another ``pytvm`` may live.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from ...ffi.errors import TVMError, TVMOSError
from ._fork_channel import FrameReader, send

__all__ = ["ForkLink", "describe_exit", "signal_name"]

#: Seconds the fork server may take to start (import, load libraries, run prefork_callback).
START_TIMEOUT = 120.0
#: Seconds the fork server may take to exit once its control socket is closed.
STOP_TIMEOUT = 10.0
#: The fork server's ``-c`` program (its one argument: the control socket's descriptor).
_START = (
    "import sys; sys.path[:] = [p for p in sys.path if p]; "
    "from pytvm.rpc.services.fork_server import main; main()"
)
#: The directory holding this ``pytvm`` package.
_PACKAGE_ROOT = str(Path(__file__).resolve().parents[3])


class ForkLink:
    """A started fork server and the server's end of its control socket.

    Parameters
    ----------
    configuration : dict
        The body of the ``configure`` message.
    """

    def __init__(self, configuration: dict[str, Any]) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        env = dict(os.environ)
        paths = [_PACKAGE_ROOT, *(path or str(Path.cwd()) for path in sys.path)]
        env["PYTHONPATH"] = os.pathsep.join(paths)
        argv = [sys.executable, "-c", _START, str(theirs.fileno())]
        try:
            self.process = subprocess.Popen(
                argv, pass_fds=(theirs.fileno(),), env=env, start_new_session=True
            )
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        self.sock = ours
        self._reader = FrameReader()
        self._closed = False
        try:
            send(ours, "configure", configuration)
        except OSError:  # it died at once; wait_ready says how
            pass

    @property
    def pid(self) -> int:
        """The fork server's process id."""
        return self.process.pid

    def wait_ready(self, timeout: float = START_TIMEOUT) -> dict[str, Any]:
        """Block until the fork server says ``hello``; its body. ``TVMError`` with its message
        when it could not start (a library that does not load, a failing ``prefork_callback``),
        ``TVMOSError`` when it exited or hung.
        """
        deadline = time.monotonic() + timeout
        try:
            while True:
                for kind, body in self._reader.messages():
                    if kind == "hello":
                        return dict(body)
                    if kind == "fatal":
                        raise TVMError(
                            f"the RPC server's fork server could not start: {body['error']}"
                        )
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TVMOSError(
                        f"the RPC server's fork server (pid {self.pid}) did not start within "
                        f"{timeout:g} s"
                    )
                self.sock.settimeout(left)
                try:
                    more = self._reader.fill(self.sock)
                except TimeoutError:
                    continue
                except OSError:
                    more = False
                if not more:
                    raise TVMOSError(
                        f"the RPC server's fork server exited while starting ({self.stop()}); "
                        "its error output above says why"
                    )
        finally:
            if not self._closed:
                self.sock.settimeout(None)

    def send(self, kind: str, body: Any = None) -> bool:
        """Send a message (blocking); False if the fork server is gone."""
        try:
            send(self.sock, kind, body)
        except OSError:
            return False
        return True

    def receive(self) -> list[tuple[str, Any]] | None:
        """The messages that arrived (without blocking); None at the end of the stream."""
        while True:
            try:
                if not self._reader.fill(self.sock, socket.MSG_DONTWAIT):
                    return None
            except BlockingIOError:
                return self._reader.messages()
            except OSError:
                return None

    def take_fds(self, count: int) -> list[int]:
        """The descriptors that came with the message just received."""
        return self._reader.take_fds(count)

    def stop(self, timeout: float = STOP_TIMEOUT) -> str:
        """Close the control socket (the fork server then kills its workers and exits), wait
        for the process, kill it if it takes longer than ``timeout``; how it ended, in words.
        Idempotent.
        """
        if not self._closed:
            self._closed = True
            self.sock.close()
            self._reader.close()
        try:
            code = self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = self.process.wait()
        return describe_exit(code)


def describe_exit(code: int) -> str:
    """An exit code in words (``os.waitstatus_to_exitcode`` convention: negative = signal)."""
    if code >= 0:
        return f"exit code {code}"
    return f"killed by {signal_name(-code)}"


def signal_name(signum: int) -> str:
    """``SIGSEGV`` for 11; ``signal 99`` for an unknown number."""
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"
