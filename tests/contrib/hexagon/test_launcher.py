"""Seed 000's scenario on this machine: host -> board server (found through a tracker) ->
accelerator emulator (CRT + MinRPC in C, device type 16).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import psutil
import pytest

import pytvm
from pytvm.contrib.hexagon import Launcher
from pytvm.rpc.services.tracker import Tracker

pytestmark = pytest.mark.needs_cc


@pytest.fixture(scope="module")
def launcher(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Launcher]:
    from pytvm.crt.build import device_binary

    device_binary()  # build once, before any timing-sensitive step
    workspace = tmp_path_factory.mktemp("board")
    with Tracker(host="127.0.0.1", port=0, port_end=1, silent=True) as tracker:
        info = {
            "rpc_tracker_host": "127.0.0.1",
            "rpc_tracker_port": tracker.port,
            "device_key": "hexagon-board",
        }
        launcher = Launcher(str(workspace), info)
        launcher.start_server()
        try:
            yield launcher
        finally:
            launcher.stop_server()


def test_seed_000_copyfrom_lands_in_the_emulator_pool(launcher: Launcher) -> None:
    with launcher.create_session() as sess:
        assert sess.device.device_type % 128 == 16 and sess.device.is_remote
        A = pytvm.nd.empty((2,), "int32", sess.device)
        A.copyfrom(np.array([2, 3], "int32"))
        assert A.numpy().tolist() == [2, 3]
        base, size = (
            int(v) for v in str(sess.get_function("pytvm.hexagon.pool_range")()).split(",")
        )
        assert base <= A.data_ptr < base + size
        peek = sess.get_function("pytvm.hexagon.peek")
        assert bytes(peek(A.data_ptr, 0, 8)) == np.array([2, 3], "int32").tobytes()


def test_64_mib_through_two_hops_with_chunking(launcher: Launcher) -> None:
    with launcher.create_session() as sess:
        x = np.random.default_rng(0).random((64 << 20) // 4, dtype=np.float32)
        A = pytvm.nd.array(x, sess.device)
        np.testing.assert_array_equal(A.numpy(), x)


def test_c_function_in_the_emulator_runs_on_the_array(launcher: Launcher) -> None:
    with launcher.create_session() as sess:
        A = pytvm.nd.array(np.arange(4, dtype="float32"), sess.device)
        sess.get_function("pytvm.device.scale_f32")(A, 2.5)
        assert A.numpy().tolist() == [0.0, 2.5, 5.0, 7.5]


def test_stop_server_leaves_nothing_running(tmp_path: Path) -> None:
    with Tracker(host="127.0.0.1", port=0, port_end=1, silent=True) as tracker:
        info = {
            "rpc_tracker_host": "127.0.0.1",
            "rpc_tracker_port": tracker.port,
            "device_key": "board-2",
        }
        launcher = Launcher(str(tmp_path), info)
        launcher.start_server()
        server = launcher._server
        assert server is not None
        sess = launcher.create_session()
        assert sess.get_function("pytvm.device.echo")(7) == 7
        tree = [server.pid] + [p.pid for p in psutil.Process(server.pid).children(recursive=True)]
        sess.close()
        launcher.stop_server()
        alive = [
            pid
            for pid in tree
            if psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
        ]
        assert alive == []


def test_pytvm_hexagon_stays_the_device_constructor_after_the_package_loads() -> None:
    import pytvm.contrib.hexagon as package
    from pytvm.ffi.device import hexagon

    assert pytvm.contrib.hexagon is package
    assert pytvm.hexagon is hexagon  # the function, not a module
    assert pytvm.hexagon(3) == pytvm.Device(16, 3)
