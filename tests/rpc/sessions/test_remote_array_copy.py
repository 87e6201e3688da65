"""``nd.array(x, remote_device)`` and ``copyfrom`` on a remote array copy the data exactly:
non-contiguous and non-native inputs, and large blocks (huge-page backed on the server).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

import pytvm
from pytvm import rpc
from pytvm.testing.rpc import thread_server


@pytest.fixture()
def remote() -> Iterator[rpc.RPCSession]:
    with thread_server() as port:
        sess = rpc.connect("127.0.0.1", port)
        yield sess
        sess.close()


def test_non_contiguous_arrays_round_trip_exactly(remote: rpc.RPCSession) -> None:
    dev = remote.cpu()
    base = np.arange(6 * 8 * 5, dtype="float32").reshape(6, 8, 5)
    for host in (base[::2, 1::3], base.transpose(2, 0, 1), base[..., ::-1]):
        assert not host.flags.c_contiguous
        out = pytvm.nd.array(host, dev)
        np.testing.assert_array_equal(out.numpy(), host)
        out.copyfrom(np.ascontiguousarray(host) + 1)
        out.copyfrom(host)
        np.testing.assert_array_equal(out.numpy(), host)
    swapped = np.arange(12, dtype=">i4")[::2]
    np.testing.assert_array_equal(pytvm.nd.array(swapped, dev).numpy(), swapped)


def test_large_contiguous_array_round_trips_exactly(remote: rpc.RPCSession) -> None:
    dev = remote.cpu()
    host = np.random.default_rng(0).integers(0, 256, (9 << 20) + 123, dtype=np.uint8)
    out = pytvm.nd.array(host, dev)
    np.testing.assert_array_equal(out.numpy(), host)
    again = host[::-1].copy()
    out.copyfrom(again)
    np.testing.assert_array_equal(out.numpy(), again)


def test_large_local_allocation_holds_its_bytes() -> None:
    host = np.random.default_rng(1).standard_normal(3 << 20).astype("float32")
    np.testing.assert_array_equal(pytvm.nd.array(host).numpy(), host)
