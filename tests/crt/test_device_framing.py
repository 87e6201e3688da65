"""The device binary with ``--framing``: RPC inside serial frames and sessions, as a
UART-attached board speaks it."""

from __future__ import annotations

import numpy as np
import pytest

import pytvm
from pytvm import rpc
from pytvm.crt import device_binary
from pytvm.crt.serial_channel import SerialChannel
from pytvm.rpc.channel import popen_pipe
from pytvm.rpc.client_session import connect_channel

pytestmark = pytest.mark.needs_cc


def test_rpc_over_serial_frames_to_the_device_binary() -> None:
    raw, proc = popen_pipe([str(device_binary()), "--framing"])
    session = connect_channel(SerialChannel(raw), "framed device", process=proc)
    with rpc.RPCSession(session) as sess:
        assert sess.get_function("pytvm.device.echo")(41) == 41
        x = np.random.default_rng(3).random(1 << 18).astype("float32")  # 1 MiB
        a = pytvm.nd.array(x, sess.cpu())
        np.testing.assert_array_equal(a.numpy(), x)
        sess.get_function("pytvm.device.scale_f32")(a, 2.0)
        np.testing.assert_array_equal(a.numpy(), x * 2)
    assert proc.returncode == 0
