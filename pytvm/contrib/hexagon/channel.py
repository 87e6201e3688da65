"""``HexagonTransportChannel``: the RPC ``Channel`` over an accelerator transport (seed 000).

The board's endpoint writes packets with ``send`` and reads replies with ``recv``; this class
turns them into the transport's ``send``/``receive`` calls, exactly as TVM's
``HexagonTransportChannel`` wraps ``hexagon_rpc_send``/``hexagon_rpc_receive``.
"""

from __future__ import annotations

from ...ffi import trace as _trace
from ...rpc.wire.channel import Channel
from .transport import Transport

__all__ = ["HexagonTransportChannel"]


class HexagonTransportChannel(Channel):
    """Open ``transport`` to ``uri`` and carry the RPC byte stream over it."""

    def __init__(self, transport: Transport, uri: str, stack_size: int) -> None:
        self.transport = transport
        self.peer = f"accelerator {uri}"
        transport.open(uri, stack_size)

    def send(self, data: bytes | bytearray | memoryview) -> None:
        """Send all of ``data`` to the accelerator."""
        with _trace.span_of("transport channel", _describe_send, data):
            self.transport.send(data)

    def recv(self, size: int) -> bytes:
        """Receive at most ``size`` bytes from the accelerator."""
        with _trace.span("transport channel", "hexagon_rpc_receive") as sp:
            out = self.transport.receive(size)
            sp.set(bytes=len(out))
            return out

    def close(self) -> None:
        """Close the transport."""
        self.transport.close()


def _describe_send(data: bytes | bytearray | memoryview) -> tuple[str, dict[str, int]]:
    """The ``transport channel`` span of a send (asked only while tracing)."""
    return "hexagon_rpc_send", {"bytes": len(data)}
