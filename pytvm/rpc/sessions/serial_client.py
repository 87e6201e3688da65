"""``rpc.connect_serial``: an RPC session with a board whose MinRPC server listens on a UART.

The board runs a pytvm device image (``make -C pytvm/src/crt board-image``): the C runtime's
MinRPC server over serial framing and the session handshake. This side opens the link (a serial
device, a socket, or a ``socket://`` URL; :mod:`pytvm.rpc.wire.serial_port`), starts the serial
session (:class:`~pytvm.rpc.wire.serial_channel.SerialChannel`, which learns the board's frame
limit in the handshake and announces ``frame_size`` as its own) and the RPC session on top.
"""

from __future__ import annotations

import os
import socket

from ...ffi.errors import TVMValueError
from ..wire.serial_channel import SerialChannel
from ..wire.serial_port import SerialTimeoutError, open_serial_port
from .client import RPCSession
from .forwarding_session import connect_channel

__all__ = ["DEFAULT_HOST_FRAME_SIZE", "connect_serial"]

#: The largest frame payload the host accepts unless ``frame_size`` says otherwise.
DEFAULT_HOST_FRAME_SIZE = 1 << 16


def connect_serial(
    port: str | os.PathLike[str] | socket.socket,
    *,
    baudrate: int = 115200,
    frame_size: int | None = None,
    timeout: float = 10.0,
    session_timeout: float = 120.0,
) -> RPCSession:
    """Start an RPC session with a board's MinRPC server over its serial link.

    ``port``: a serial device path (opened in termios raw mode at ``baudrate``), a connected
    socket, or ``"socket://host:port"`` / ``"tcp:host:port"``. ``frame_size``: the largest frame
    payload this side accepts, announced in the handshake (default 64 KiB); what this side sends
    is bounded by the board's announced limit. ``timeout``: seconds the connection and the
    handshake (serial session and RPC) may take. ``session_timeout``: the longest any later wait
    for the board may take (a long kernel or copy); a silent board then raises
    :class:`~pytvm.rpc.wire.serial_port.SerialTimeoutError` naming the port.
    """
    for name, value in (("timeout", timeout), ("session_timeout", session_timeout)):
        if not value > 0:
            raise TVMValueError(f"connect_serial: {name}={value!r}; expected positive seconds")
    max_payload = DEFAULT_HOST_FRAME_SIZE if frame_size is None else int(frame_size)
    link = open_serial_port(port, baudrate=baudrate, timeout=timeout)
    channel = SerialChannel(link, max_payload=max_payload)
    try:
        session = connect_channel(channel, f"serial {link.peer}")
    except SerialTimeoutError as err:
        channel.close()
        raise SerialTimeoutError(
            f"connect_serial({link.peer}): no pytvm board answered the handshake within "
            f"{timeout:g} s; check the port, that the board runs a pytvm image (make -C "
            "pytvm/src/crt board-image) and its baud rate"
        ) from err
    except BaseException:
        channel.close()
        raise
    link.timeout = session_timeout
    return RPCSession(session)
