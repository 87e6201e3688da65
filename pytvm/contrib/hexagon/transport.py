"""The four calls a board makes to reach its accelerator: open, send, receive, close.

They mirror ``hexagon_rpc_open/send/receive/close`` of seed 000, which FastRPC's generated stub
carries to the DSP and its generated skel hands to the implementation there.

:class:`StubTransport` (the default of
:func:`pytvm.contrib.hexagon.open_accelerator_session`) does the same for the accelerator
emulator on this machine: ``open`` starts ``pytvm-device <r> <w>
--hexagon --skel`` (CRT + MinRPC in C, device type 16, serving the C skel generated from
``hexagon_rpc.idl``) and every call goes through the stub
(:class:`~pytvm.contrib.hexagon.stub.HexagonRpcStub`, which marshals it from the same parsed
file) as a request/reply message on the process's pipes. On the device, ``hexagon_rpc_send``
feeds the bytes to the MinRPC server and ``hexagon_rpc_receive`` returns what it wrote
(``pytvm/src/crt/device/hexagon_rpc_impl.c``).

:class:`PipeTransport` is the older shortcut kept for comparison: raw RPC bytes straight over
the pipes of ``pytvm-device --hexagon``, no stub or skel.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence

from ...ffi.errors import TVMOSError, TVMValueError
from ...rpc.wire.channel import reap
from .stub import IDL_PATH, HexagonRpcStub, StubError
from .wire import DEFAULT_MAX_MESSAGE

__all__ = ["DEVICE_MAX_MESSAGE", "IDL_PATH", "PipeTransport", "StubTransport", "Transport"]

#: The device's skel buffer (``PYTVM_HEXAGON_RPC_SKEL_BUFFER_BYTES``), the stub's default
#: ``max_message``.
DEVICE_MAX_MESSAGE = DEFAULT_MAX_MESSAGE

#: Statuses of the device implementation (``hexagon_rpc_impl.h``).
IMPL_STATUSES = {
    -1: "not the handle of the open session",
    -2: "a session is already open on the accelerator",
    -3: "bad uri or stack size",
    -4: "the accelerator's RPC server could not start",
    -5: "the accelerator's RPC server has ended",
    -6: "the accelerator's input buffer is full (replies were not received)",
    -7: "no reply is pending: the accelerator waits for the rest of a request",
}


class Transport:
    """What a board needs from its accelerator link (the calls of ``hexagon_rpc.idl``)."""

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
        """Start the emulator with a pipe pair and keep the parent ends."""
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
        """Write all of ``data`` to the emulator's pipe; returns its length."""
        view = memoryview(data).cast("B")
        total = len(view)
        while len(view):
            view = view[os.write(self._write_fd, view) :]
        return total

    def receive(self, size: int) -> bytes:
        """Up to ``size`` bytes from the emulator's pipe; ``b""`` once it closed."""
        return os.read(self._read_fd, size)

    def close(self) -> None:
        """Close both pipe ends and reap the emulator."""
        for fd in (self._write_fd, self._read_fd):
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self._read_fd = self._write_fd = -1
        if self.process is not None:
            reap(self.process)
            self.process = None


class StubTransport(Transport):
    """The emulator behind the hexagon_rpc stub: ``<binary> <read_fd> <write_fd> --hexagon --skel``.

    ``max_message`` is the device's skel buffer (``PYTVM_HEXAGON_RPC_SKEL_BUFFER_BYTES``, 1 MiB
    by default): no request or reply is larger. ``send`` splits its data into calls of at most
    ``chunk`` bytes and ``receive`` asks for at most ``chunk`` bytes per call.
    """

    def __init__(
        self,
        binary: str | os.PathLike[str],
        extra_args: Sequence[str] = (),
        max_message: int = DEVICE_MAX_MESSAGE,
        chunk: int = 256 * 1024,
    ) -> None:
        if not 0 < chunk <= max_message - 64:
            raise TVMValueError(f"chunk={chunk} must be in 1..{max_message - 64}")
        self.binary = os.fspath(binary)
        self.extra_args = list(extra_args)
        self.max_message = max_message
        self.chunk = chunk
        self.process: subprocess.Popen[bytes] | None = None
        self.stub: HexagonRpcStub | None = None
        self.handle = 0
        self._fds: tuple[int, int] = (-1, -1)

    def _fail(self, what: str, err: Exception) -> TVMOSError:
        status = getattr(err, "status", None)
        detail = IMPL_STATUSES.get(status) if isinstance(status, int) else None
        text = f"{err} ({detail})" if detail else str(err)
        return TVMOSError(f"accelerator {what} failed: {text}")

    def open(self, uri: str, stack_size: int) -> None:
        """Start the emulator behind the skel and open the accelerator session with the stub."""
        if self.process is not None:
            raise TVMOSError(f"accelerator transport to {uri!r} is already open")
        child_read, parent_write = os.pipe()
        parent_read, child_write = os.pipe()
        argv = [self.binary, str(child_read), str(child_write), "--hexagon", "--skel"]
        argv += self.extra_args
        try:
            self.process = subprocess.Popen(argv, pass_fds=(child_read, child_write))
        except OSError as err:
            os.close(parent_read)
            os.close(parent_write)
            raise TVMOSError(f"cannot start the accelerator emulator {self.binary}: {err}") from err
        finally:
            os.close(child_read)
            os.close(child_write)
        self._fds = (parent_read, parent_write)
        self.stub = HexagonRpcStub(parent_read, parent_write, self.max_message)
        try:
            self.handle = self.stub.open(uri, int(stack_size))
        except (StubError, ValueError, TypeError) as err:
            self.close()
            raise self._fail(f"open of {uri!r}", err) from err

    def _stub(self) -> HexagonRpcStub:
        if self.stub is None:
            raise TVMOSError("the accelerator transport is not open")
        return self.stub

    def send(self, data: bytes | bytearray | memoryview) -> int:
        """Send ``data`` in calls of at most ``chunk`` bytes; returns its length."""
        stub = self._stub()
        view = memoryview(data).cast("B")
        try:
            for start in range(0, len(view), self.chunk):
                stub.send(self.handle, view[start : start + self.chunk])
        except StubError as err:
            raise self._fail("send", err) from err
        return len(view)

    def receive(self, size: int) -> bytes:
        """Up to ``min(size, chunk)`` bytes from the accelerator; ``b""`` for ``size <= 0``."""
        stub = self._stub()
        if size <= 0:
            return b""
        try:
            data = stub.receive(self.handle, min(size, self.chunk))
        except StubError as err:
            raise self._fail("receive", err) from err
        return data

    def close(self) -> None:
        """Close the session on the accelerator (if open) and reap the emulator."""
        if self.stub is not None and self.handle:
            try:
                self.stub.close(self.handle)
            except StubError:
                pass  # the device is gone or the stream broke: reaping it is all that is left
        self.stub = None
        self.handle = 0
        for fd in self._fds:
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self._fds = (-1, -1)
        if self.process is not None:
            reap(self.process)
            self.process = None
