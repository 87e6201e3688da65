"""Seed 000's path on one machine: host -> board RPC server (found through a tracker) ->
accelerator emulator (the C runtime and its MinRPC server in their own process, device type 16).

Run: ``python examples/04_accelerator.py`` (needs a C compiler and ``make``: the emulator binary is
built on first use and cached in ``~/.cache/pytvm``).
"""

from __future__ import annotations

import tempfile

import numpy as np

import pytvm
from pytvm.contrib.hexagon import Launcher
from pytvm.crt import device_binary
from pytvm.rpc import Tracker


def main() -> None:
    """Start a tracker and a board server, open an accelerator session, copy into its pool."""
    print("emulator binary:", device_binary(hexagon=True))  # builds it on first use
    with (
        tempfile.TemporaryDirectory(prefix="pytvm-board-") as workspace,
        Tracker(host="127.0.0.1", port=0, silent=True) as tracker,
    ):
        rpc_info = {
            "rpc_tracker_host": "127.0.0.1",
            "rpc_tracker_port": tracker.port,
            "device_key": "example-hexagon",
        }
        launcher = Launcher(workspace, rpc_info)  # the board is this machine (LocalShell)
        print("board server on port", launcher.start_server())
        try:
            # the board server calls the accelerator session constructor, which starts the
            # emulator; every request of this session is forwarded to it
            with launcher.create_session() as sess:
                print("accelerator device:", sess.device)
                A = pytvm.nd.empty((2,), "int32", sess.device)
                with pytvm.trace() as trace:
                    A.copyfrom(np.array([2, 3], "int32"))
                print("A.numpy() =", A.numpy().tolist())

                # the emulator's own functions: where its memory pool is, and a peek into it
                base, size = map(
                    int, str(sess.get_function("pytvm.hexagon.pool_range")()).split(",")
                )
                inside = base <= A.data_ptr < base + size
                print(f"A's data at {A.data_ptr:#x} lies in the emulator's pool: {inside}")
                raw = bytes(sess.get_function("pytvm.hexagon.peek")(A.data_ptr, 0, 8))
                print("bytes there:", raw.hex(" "))

                print("\ntrace of A.copyfrom(...) across the three processes:")
                print(trace.text())
        finally:
            launcher.stop_server()  # waits for the board server (and its emulator) to exit
    print("board server and tracker stopped")


if __name__ == "__main__":
    main()
