"""A copy through a hop (a server whose serving session forwards to another server) is passed on
as its data arrives, both ways (``Endpoint.copy_to_remote_streamed``,
``Endpoint.copy_from_remote_streamed``): the bytes land intact whatever the packet and piece
sizes, and an error of the far hop is reported with both sessions still usable.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

import pytvm
from pytvm import rpc
from pytvm.ffi.device import Device
from pytvm.ffi.dtype import DataType
from pytvm.rpc.sessions import endpoint as endpoint_module
from pytvm.rpc.sessions.forwarding_session import ForwardingSession
from pytvm.rpc.wire.base import RPCError
from pytvm.rpc.wire.protocol import TensorDesc, encode_copy_to_remote
from pytvm.testing.rpc import thread_server


@pytest.fixture
def two_hops() -> Iterator[rpc.RPCSession]:
    with thread_server() as inner, thread_server() as outer:
        args = ["rpc.Connect", "127.0.0.1", inner, "", False]
        with rpc.connect("127.0.0.1", outer, session_constructor_args=args) as sess:
            yield sess


@pytest.mark.parametrize("max_packet", [0, 100_003], ids=["one-packet", "many-packets"])
def test_copy_through_a_hop_lands_intact(
    two_hops: rpc.RPCSession, max_packet: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(endpoint_module, "_FORWARD_PIECE", 4096 + 7)  # pieces straddle packets
    monkeypatch.setattr(endpoint_module, "_FORWARD_READ_PIECE", 3000 + 1)
    if max_packet:
        pytvm.register_func("tvm.rpc.server.GetCRTMaxPacketSize", lambda: max_packet, override=True)
    try:
        x = np.random.default_rng(3).integers(0, 256, 3 * (1 << 20) + 5, dtype=np.uint8)
        a = pytvm.nd.array(x, two_hops.cpu())
        np.testing.assert_array_equal(a.numpy(), x)
        a.copyfrom(x[::-1].copy())
        np.testing.assert_array_equal(a.numpy(), x[::-1])
        empty = pytvm.nd.array(np.zeros(0, "float32"), two_hops.cpu())
        assert empty.numpy().shape == (0,)
    finally:
        if max_packet:
            pytvm.remove_global_func("tvm.rpc.server.GetCRTMaxPacketSize")


def test_far_hop_error_is_reported_and_both_hops_go_on(two_hops: rpc.RPCSession) -> None:
    x = np.arange(50_000, dtype="int32")
    a = pytvm.nd.array(x, two_hops.cpu())
    bogus = TensorDesc(0x10, Device(1, 0), DataType("int32"), (50_000,))  # no such allocation
    client = two_hops._session
    with pytest.raises(RPCError, match="0x10"):
        client.copy_to_remote(bogus, memoryview(x.tobytes()))
    np.testing.assert_array_equal(a.numpy(), x)  # the streams are in step
    a.copyfrom(x + 1)
    np.testing.assert_array_equal(a.numpy(), x + 1)


def test_far_hop_read_error_is_reported_and_both_hops_go_on(two_hops: rpc.RPCSession) -> None:
    x = np.arange(70_000, dtype="int32")
    a = pytvm.nd.array(x, two_hops.cpu())
    bogus = TensorDesc(0x10, Device(1, 0), DataType("int32"), (70_000,))  # no such allocation
    with pytest.raises(RPCError, match="0x10"):
        two_hops._session.copy_from_remote(bogus, 4 * 70_000)
    np.testing.assert_array_equal(a.numpy(), x)


def test_client_lost_mid_copy_ends_both_hops_cleanly() -> None:
    with thread_server(sessions=2) as inner, thread_server(sessions=2) as outer:
        args = ["rpc.Connect", "127.0.0.1", inner, "", False]
        sess = rpc.connect("127.0.0.1", outer, session_constructor_args=args)
        a = pytvm.nd.empty((1 << 20,), "uint8", sess.cpu())
        client = sess._session
        assert isinstance(client, ForwardingSession)
        desc = client.desc_of(a.dltensor)
        # half of a copy's data, then the client is gone: the hop must not wait on it forever
        channel = client.endpoint.channel
        channel.send(encode_copy_to_remote(desc, desc.nbytes) + bytes(desc.nbytes // 2))
        channel.close()
        with rpc.connect("127.0.0.1", outer, session_constructor_args=args) as again:
            x = np.arange(1000, dtype="int64")
            np.testing.assert_array_equal(pytvm.nd.array(x, again.cpu()).numpy(), x)
