"""A tracker and two RPC servers on loopback: lease a server by key, copy arrays, upload and run a
kernel remotely, time it there, and open a nested session one hop further.

Run: ``python examples/02_rpc_server_and_tracker.py`` (needs a C compiler for the kernel).

The servers and the tracker run in this process (``Server`` forks one worker process per
session); ``pytvm rpc tracker`` and ``pytvm rpc server`` start the same services from a shell.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

import pytvm
from pytvm import rpc
from pytvm.ffi import libinfo

HERE = Path(__file__).resolve().parent


def use(tracker_port: int, direct_port: int, lib: str) -> None:
    """What a client does with the services: ``lib`` is a local kernels.so."""
    tracker = rpc.connect_tracker("127.0.0.1", tracker_port)
    sess = tracker.request("board", timeout=30)  # a server leased by key
    a = pytvm.nd.array(np.arange(8, dtype="float32"), sess.cpu())  # device remote[0]:cpu(0)
    print("on", a.device, "->", a.numpy())  # copied back over the wire
    sess.upload(lib, "kernels.so")
    mod = sess.load_module("kernels.so")  # dlopen on the server
    mod["vadd"](a, a, a)  # runs on the server, on the server's memory
    print("remote vadd(a, a, a) ->", a.numpy())
    timer = mod.time_evaluator("vadd", sess.cpu(), number=100)  # timed on the server
    print(f"remote time_evaluator: {timer(a, a, a).mean * 1e9:.0f} ns per call")

    direct = rpc.connect("127.0.0.1", direct_port)  # no tracker in between
    print("direct:", pytvm.nd.array(np.ones(4, "float32"), direct.cpu()).numpy())
    direct.close()

    # one hop further: the leased server connects on to the direct one and forwards every request
    sess.close()
    inner = tracker.request(
        "board",
        timeout=30,
        session_constructor_args=["rpc.Connect", "127.0.0.1", direct_port, "", False],
    )
    print("nested:", pytvm.nd.array(np.arange(3, dtype="int32"), inner.cpu()).numpy())
    inner.close()
    tracker.close()


def main() -> None:
    """Start the tracker and servers on free ports, use them, stop them."""
    with tempfile.TemporaryDirectory(prefix="pytvm-example-") as tmp:
        lib = libinfo.compile_shared([HERE / "kernels.c"], Path(tmp) / "kernels.so")
        # port=0: any free port; the object's .port says which
        with (
            rpc.Tracker(host="127.0.0.1", port=0, silent=True) as tracker,
            rpc.Server(
                host="127.0.0.1",
                port=0,
                key="board",
                tracker_addr=("127.0.0.1", tracker.port),
                silent=True,
            ) as leased,  # registered with the tracker when the constructor returns
            rpc.Server(host="127.0.0.1", port=0, silent=True) as direct,
        ):
            print(f"tracker :{tracker.port}, leased server :{leased.port}, direct :{direct.port}")
            use(tracker.port, direct.port, str(lib))
    print("servers and tracker stopped")


if __name__ == "__main__":
    main()
