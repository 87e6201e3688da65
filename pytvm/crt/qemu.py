"""``QemuBoard``: a board image (``make -C pytvm/src/crt board-image``) running in QEMU, its
UART0 on a loopback TCP socket.

The socket is race-free: this side listens on ``127.0.0.1:0`` (the kernel picks a free port)
and QEMU connects to it as a client (``-serial tcp:127.0.0.1:<port>``), so no port is guessed.
Semihosting is on, so a board that faults reports it (a LOG message, see the board's
``board.c``) and stops QEMU: the link closes instead of hanging. QEMU is killed when the context
exits (an ``atexit`` hook is the backstop).

``icount_shift=0`` runs QEMU with ``-icount shift=0``: virtual time advances 1 ns per guest
instruction, so the board's clock (SysTick, 40 ns resolution) and ``time_evaluator`` results
read as instruction counts (1 s of device time = 1e9 instructions), independent of host load.

Examples
--------
>>> from pytvm.crt.qemu import QemuBoard            # doctest: +SKIP
>>> with QemuBoard("build/board/mps2-an386/image.elf") as board:   # doctest: +SKIP
...     sess = board.connect_session()
...     sess.get_function("testing.echo")(7)
7
"""

from __future__ import annotations

import atexit
import os
import shutil
import socket
import subprocess
import tempfile
import time
import weakref
from pathlib import Path
from types import TracebackType

from ..rpc.sessions.client import RPCSession
from ..rpc.sessions.serial_client import connect_serial
from ..rpc.wire.serial_port import SerialLinkChannel, open_serial_port

__all__ = ["QEMU_MACHINES", "QemuBoard", "QemuBoardError", "qemu_system_arm"]

#: Boards under pytvm/src/crt/boards and the QEMU machine and CPU each one runs on.
QEMU_MACHINES = {"mps2-an386": ("mps2-an386", "cortex-m4")}

#: The largest ``-icount shift`` accepted (2**10 ns of virtual time per instruction).
MAX_ICOUNT_SHIFT = 10

_live: weakref.WeakSet[QemuBoard] = weakref.WeakSet()


class QemuBoardError(RuntimeError):
    """QEMU is missing, failed to start, or the board never connected its UART."""


def qemu_system_arm() -> str:
    """The path of ``qemu-system-arm``; a clear error naming ``make mcu`` when it is missing."""
    path = shutil.which("qemu-system-arm")
    if path is None:
        raise QemuBoardError(
            "qemu-system-arm is not installed (or not on PATH); `make mcu` in the repository "
            "root installs it with the Arm cross compiler (Debian packages qemu-system-arm, "
            "gcc-arm-none-eabi, libnewlib-arm-none-eabi)"
        )
    return path


@atexit.register
def _kill_all() -> None:
    for board in list(_live):
        board.close()


class QemuBoard:
    """A QEMU process running ``elf``; :meth:`channel` is its UART0 as a raw byte link."""

    def __init__(
        self,
        elf: str | os.PathLike[str],
        machine: str = "mps2-an386",
        icount_shift: int | None = None,
        timeout: float = 20.0,
    ) -> None:
        self.elf = Path(elf)
        if not self.elf.is_file():
            raise FileNotFoundError(
                f"board image {self.elf} does not exist; build it with `make -C pytvm/src/crt "
                f"board-image BOARD={machine} O=<dir>`"
            )
        if machine not in {m for m, _ in QEMU_MACHINES.values()}:
            raise ValueError(
                f"QEMU machine {machine!r} has no pytvm board; known: {sorted(QEMU_MACHINES)}"
            )
        if icount_shift is not None and not 0 <= icount_shift <= MAX_ICOUNT_SHIFT:
            raise ValueError(f"icount_shift={icount_shift}: expected 0..{MAX_ICOUNT_SHIFT} or None")
        if not timeout > 0:
            raise ValueError(f"timeout={timeout!r}: expected positive seconds")
        self.machine = machine
        self.icount_shift = icount_shift
        self.timeout = timeout
        self.process: subprocess.Popen[bytes] | None = None
        self._sock: socket.socket | None = None
        self._link: SerialLinkChannel | None = None
        self._log = tempfile.TemporaryFile()

    @property
    def name(self) -> str:
        """``qemu <machine> (<elf file name>)``, for messages."""
        return f"qemu {self.machine} ({self.elf.name})"

    def command(self, port: int) -> list[str]:
        """The QEMU command line for a UART socket on ``127.0.0.1:port``."""
        cmd = [
            qemu_system_arm(),
            "-M",
            self.machine,
            "-nographic",
            "-monitor",
            "none",
            "-semihosting-config",
            "enable=on,target=native",
            "-kernel",
            str(self.elf),
            "-serial",
            f"tcp:127.0.0.1:{port},nodelay=on",
        ]
        if self.icount_shift is not None:
            cmd += ["-icount", f"shift={self.icount_shift}"]
        return cmd

    def output(self) -> str:
        """What QEMU wrote to stdout/stderr so far (its errors, semihosting output)."""
        self._log.seek(0)
        return self._log.read().decode("utf-8", errors="replace").strip()

    def start(self) -> QemuBoard:
        """Start QEMU and accept its UART connection (at most ``timeout`` seconds)."""
        if self.process is not None:
            return self
        cmd_path = qemu_system_arm()
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            listener.bind(("127.0.0.1", 0))
            listener.listen(1)
            port = listener.getsockname()[1]
            cmd = self.command(port)
            cmd[0] = cmd_path
            self.process = subprocess.Popen(
                cmd, stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT
            )
            _live.add(self)
            self._sock = self._accept(listener)
        except BaseException:
            self.close()
            raise
        finally:
            listener.close()
        return self

    def _accept(self, listener: socket.socket) -> socket.socket:
        assert self.process is not None
        deadline = time.monotonic() + self.timeout
        listener.settimeout(0.1)
        while True:
            try:
                sock, _ = listener.accept()
                return sock
            except TimeoutError:
                pass
            if self.process.poll() is not None:
                raise QemuBoardError(
                    f"{self.name} exited with status {self.process.returncode} before its UART "
                    f"connected: {self.output() or '(no output)'}"
                )
            if time.monotonic() > deadline:
                raise QemuBoardError(
                    f"{self.name}: its UART did not connect within {self.timeout:g} s"
                )

    def channel(self) -> SerialLinkChannel:
        """UART0 as a raw byte link (each read waits at most ``timeout`` seconds)."""
        if self._sock is None:
            self.start()
        if self._link is None:
            assert self._sock is not None
            self._link = open_serial_port(self._sock, timeout=self.timeout)
            self._link.peer = f"{self.name} UART0"
        return self._link

    def connect_session(
        self, frame_size: int | None = None, session_timeout: float = 120.0
    ) -> RPCSession:
        """An RPC session with the board over UART0 (``rpc.connect_serial`` on its socket)."""
        if self._sock is None:
            self.start()
        if self._link is not None:
            raise QemuBoardError(f"{self.name}: its UART is already in use by channel()")
        assert self._sock is not None
        sock, self._sock = self._sock, None  # the session owns and closes the socket now
        return connect_serial(
            sock, frame_size=frame_size, timeout=self.timeout, session_timeout=session_timeout
        )

    def close(self) -> None:
        """Kill QEMU and close the UART socket."""
        if self._link is not None:
            self._link.close()
            self._link = None
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        if self.process is not None:
            if self.process.poll() is None:
                self.process.kill()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:  # pragma: no cover - a kill that did not land
                pass
            self.process = None
        _live.discard(self)

    def __enter__(self) -> QemuBoard:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
        self._log.close()
