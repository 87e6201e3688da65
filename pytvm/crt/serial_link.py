"""Former home of :mod:`pytvm.rpc.wire.serial_link`: the serial protocol lives in the RPC wire
layer now (so ``pytvm.rpc.connect_serial`` can use it); its public names stay importable here.
"""

from __future__ import annotations

from ..rpc.wire.serial_link import (
    HEADER_SIZE,
    MIN_MAX_PAYLOAD,
    SESSION_VERSION,
    START_BODY_SIZE,
    EventKind,
    LinkEvent,
    LinkState,
    MessageType,
    SerialLink,
    decode_message,
    encode_message,
    start_limit,
)

__all__ = [
    "HEADER_SIZE",
    "MIN_MAX_PAYLOAD",
    "SESSION_VERSION",
    "START_BODY_SIZE",
    "EventKind",
    "LinkEvent",
    "LinkState",
    "MessageType",
    "SerialLink",
    "decode_message",
    "encode_message",
    "start_limit",
]
