"""One compiled kernel runs three ways: here, on a remote server (pytvm's and apache-tvm's), and
inside the C runtime's device binary through MinRPC.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import pytvm
from pytvm import rpc, te
from pytvm.crt import device_binary
from pytvm.driver import CompiledModule
from pytvm.testing.rpc import service_process

pytestmark = pytest.mark.needs_cc

N = 64


def _schedule() -> tuple[te.Schedule, list[te.Tensor]]:
    A = te.placeholder((N,), name="A")
    B = te.placeholder((N,), name="B")
    C = te.compute((N,), lambda i: te.exp(A[i]) + B[i] * 2.0, name="C")
    s = te.create_schedule(C.op)
    outer, inner = s[C].split(C.op.axis[0], factor=8)
    s[C].vectorize(inner)
    s[C].parallel(outer)
    return s, [A, B, C]


@pytest.fixture(scope="module")
def inputs() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return rng.random(N, dtype=np.float32), rng.random(N, dtype=np.float32)


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    s, args = _schedule()
    path = tmp_path_factory.mktemp("lib") / "kernel.so"
    pytvm.build(s, args, target="llvm", name="kernel").export_library(path)
    return path


def _check_on(
    sess: rpc.RPCSession,
    mod: pytvm.runtime.Module,
    inputs: tuple[np.ndarray, ...],
    dev: pytvm.Device | None = None,
) -> None:
    a, b = inputs
    dev = dev or sess.cpu()
    arrays = [pytvm.nd.array(a, dev), pytvm.nd.array(b, dev), pytvm.nd.empty((N,), "float32", dev)]
    mod["kernel"](*arrays)
    np.testing.assert_allclose(arrays[2].numpy(), np.exp(a) + 2 * b, rtol=1e-5)
    with pytest.raises(
        ValueError, match=r"kernel: argument C: expected shape \(64,\), got \(65,\)"
    ):
        mod["kernel"](arrays[0], arrays[1], pytvm.nd.empty((N + 1,), "float32", dev))


def test_local(library: Path, inputs: tuple[np.ndarray, np.ndarray]) -> None:
    mod = pytvm.runtime.load_module(library)
    a, b = inputs
    out = pytvm.nd.empty((N,), "float32")
    mod["kernel"](pytvm.nd.array(a), pytvm.nd.array(b), out)
    np.testing.assert_allclose(out.numpy(), np.exp(a) + 2 * b, rtol=1e-5)


def test_on_a_pytvm_server(library: Path, inputs: tuple[np.ndarray, np.ndarray]) -> None:
    with service_process("server", "--host", "127.0.0.1") as (_, port):
        sess = rpc.connect("127.0.0.1", port)
        sess.upload(str(library))
        mod = sess.load_module(library.name)
        _check_on(sess, mod, inputs)
        timer = mod.time_evaluator("kernel", sess.cpu(), number=10, repeat=2)
        a, b = inputs
        dev = sess.cpu()
        result = timer(
            pytvm.nd.array(a, dev), pytvm.nd.array(b, dev), pytvm.nd.empty((N,), "float32", dev)
        )
        assert len(result.results) == 2 and result.mean > 0
        sess.close()


@pytest.fixture(scope="module")
def tvm_server() -> Iterator[int]:
    tvm_rpc = pytest.importorskip("tvm.rpc")
    server = tvm_rpc.Server(host="127.0.0.1", port=9600, port_end=9700, silent=True)
    yield server.port
    server.terminate()


def test_on_an_apache_tvm_server(
    library: Path, inputs: tuple[np.ndarray, np.ndarray], tvm_server: int
) -> None:
    sess = rpc.connect("127.0.0.1", tvm_server)
    sess.upload(str(library))
    mod = sess.load_module(library.name)
    a, b = inputs
    dev = sess.cpu()
    arrays = [pytvm.nd.array(a, dev), pytvm.nd.array(b, dev), pytvm.nd.empty((N,), "float32", dev)]
    mod["kernel"](*arrays)
    np.testing.assert_allclose(arrays[2].numpy(), np.exp(a) + 2 * b, rtol=1e-5)
    with pytest.raises(Exception, match=r"kernel: argument C: expected shape \(64,\), got \(65,\)"):
        mod["kernel"](arrays[0], arrays[1], pytvm.nd.empty((N + 1,), "float32", dev))
    sess.close()


@pytest.mark.parametrize("minimal", [False, True], ids=["full", "minimal"])
def test_inside_the_c_runtime(
    tmp_path: Path, inputs: tuple[np.ndarray, np.ndarray], minimal: bool
) -> None:
    s, args = _schedule()
    built = pytvm.build(s, args, target="c --system-lib", name="kernel")
    assert isinstance(built, CompiledModule)  # a system library is always C
    source = built.get_source()
    assert "TVMSystemLibEntryPoint" in source and '"\\x01" "kernel\\0"' in source
    src = tmp_path / "kernels.c"
    built.save(src)
    sess = rpc.PopenSession(str(device_binary(system_lib=[src], minimal=minimal)))
    try:
        _check_on(sess, sess.system_lib(), inputs)
    finally:
        sess.close()


def test_on_the_accelerator_behind_the_board(
    tmp_path: Path, inputs: tuple[np.ndarray, np.ndarray]
) -> None:
    from pytvm.contrib.hexagon import Launcher
    from pytvm.rpc.services.tracker import Tracker

    s, args = _schedule()
    src = tmp_path / "kernels.c"
    pytvm.build(s, args, target="c --system-lib", name="kernel").save(src)
    with Tracker(host="127.0.0.1", port=9190, port_end=9290, silent=True) as tracker:
        info = {
            "rpc_tracker_host": "127.0.0.1",
            "rpc_tracker_port": tracker.port,
            "device_key": "kernels",
            "system_lib": [str(src)],
        }
        launcher = Launcher(str(tmp_path / "board"), info)
        launcher.start_server()
        try:
            with launcher.create_session() as sess:
                assert sess.device.device_type % 128 == 16  # the accelerator's memory
                _check_on(sess.rpc, sess.system_lib(), inputs, sess.device)
        finally:
            launcher.stop_server()
