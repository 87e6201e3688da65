"""The four calls a board makes to reach its accelerator: open, send, receive, close.

They mirror ``hexagon_rpc_open/send/receive/close`` of seed 000, which FastRPC's generated stub
carries to the DSP. :class:`PipeTransport` implements them for the accelerator emulator on this
machine: ``open`` starts the device process (CRT + MinRPC in C, exposing device type 16) and the
other calls move bytes over its two pipes.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence

from ..ffi.errors import TVMOSError

__all__ = ["Transport", "PipeTransport"]


class Transport:
    """What a board needs from its accelerator link (the interface of the generated stub)."""

    def open(self, uri: str, stack_size: int) -> None:
        """Start (or attach to) the accelerator's RPC server."""
        raise NotImplementedError

    def send(self, data: bytes | bytearray | memoryview) -> int:
        """Hand ``data`` to the accelerator; returns the bytes taken."""
        raise NotImplementedError

    def receive(self, size: int) -> bytes:
        """Up to ``size`` bytes from the accelerator; ``b""`` once it closed."""
        raise NotImplementedError

    def close(self) -> None:
        """Stop the accelerator's RPC server and release the link."""
        raise NotImplementedError


class PipeTransport(Transport):
    """The emulator: a device process started as ``<binary> <read_fd> <write_fd> --hexagon``."""

    def __init__(self, binary: str | os.PathLike[str], extra_args: Sequence[str] = ()) -> None:
        self.binary = os.fspath(binary)
        self.extra_args = list(extra_args)
        self.process: subprocess.Popen[bytes] | None = None
        self._read_fd = -1
        self._write_fd = -1

    def open(self, uri: str, stack_size: int) -> None:
        if self.process is not None:
            raise TVMOSError(f"accelerator transport to {uri!r} is already open")
        child_read, parent_write = os.pipe()
        parent_read, child_write = os.pipe()
        argv = [self.binary, str(child_read), str(child_write), "--hexagon", *self.extra_args]
        try:
            self.process = subprocess.Popen(argv, pass_fds=(child_read, child_write))
        except OSError as err:
            for fd in (child_read, parent_write, parent_read, child_write):
                os.close(fd)
            raise TVMOSError(f"cannot start the accelerator emulator {self.binary}: {err}") from err
        os.close(child_read)
        os.close(child_write)
        self._read_fd, self._write_fd = parent_read, parent_write

    def send(self, data: bytes | bytearray | memoryview) -> int:
        view = memoryview(data).cast("B")
        total = len(view)
        while len(view):
            view = view[os.write(self._write_fd, view) :]
        return total

    def receive(self, size: int) -> bytes:
        return os.read(self._read_fd, size)

    def close(self) -> None:
        for fd in (self._write_fd, self._read_fd):
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self._read_fd = self._write_fd = -1
        if self.process is not None:
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            self.process = None
