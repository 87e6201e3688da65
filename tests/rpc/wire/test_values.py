"""The packed-sequence values (``pytvm.rpc.wire.values``): what ``protocol`` re-exports and the
server status an unknown type index is refused with.
"""

from __future__ import annotations

import struct

import pytest

from pytvm.rpc.wire import protocol, values
from pytvm.rpc.wire.base import ProtocolError
from pytvm.rpc.wire.protocol import ServerStatus


def test_protocol_reexports_every_public_value_name() -> None:
    assert set(values.__all__) <= set(protocol.__all__)
    assert all(getattr(protocol, name) is getattr(values, name) for name in values.__all__)


def test_unknown_type_index_is_refused_with_its_server_status_name() -> None:
    wire = struct.pack("<ii", 1, 40)  # one value, of type index 40 (no such index)
    with pytest.raises(ProtocolError, match=f"status {ServerStatus.UNKNOWN_TYPE_INDEX.name}"):
        values.decode_pseq(values.Reader(wire))
