"""Former home of :mod:`pytvm.rpc.wire.serial_framing`: the serial protocol lives in the RPC wire
layer now (so ``pytvm.rpc.connect_serial`` can use it); its public names stay importable here.
"""

from __future__ import annotations

from ..rpc.wire.serial_framing import (
    CRC_INIT,
    DEFAULT_MAX_PAYLOAD,
    ESC,
    ESC_XOR,
    SOP,
    Framer,
    Unframer,
    crc16,
    encode_frame,
)

__all__ = [
    "CRC_INIT",
    "DEFAULT_MAX_PAYLOAD",
    "ESC",
    "ESC_XOR",
    "SOP",
    "Framer",
    "Unframer",
    "crc16",
    "encode_frame",
]
