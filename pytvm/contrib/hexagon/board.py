"""``python -m pytvm.contrib.hexagon.board``: the board's RPC server, with the accelerator session
constructor registered (what seed 000's ``tvm_rpc_android server`` is on a phone).
"""

from __future__ import annotations

import argparse
import functools
import signal
import sys
from collections.abc import Sequence

from ...rpc.services.server import Server
from .session import prepare_emulator  # the import registers pytvm.hexagon.create_session

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Serve until SIGINT/SIGTERM; prints ``board server listening on HOST:PORT`` when ready."""
    parser = argparse.ArgumentParser(prog="python -m pytvm.contrib.hexagon.board")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9090)
    parser.add_argument("--port-end", type=int, default=9199)
    parser.add_argument("--tracker", default=None, help="host:port of the tracker")
    parser.add_argument("--key", default="", help="rpc key to register under")
    parser.add_argument(
        "--system-lib",
        action="append",
        default=[],
        metavar="FILE.c",
        help="C source of kernels (target 'c --system-lib') linked into the accelerator emulator",
    )
    args = parser.parse_args(argv)
    tracker = None
    if args.tracker:
        host, _, port = args.tracker.rpartition(":")
        tracker = (host, int(port))
    server = Server(
        host=args.host,
        port=args.port,
        port_end=args.port_end,
        key=args.key,
        tracker_addr=tracker,
        silent=True,
        # The process that forks the session workers builds (or finds) the emulator and parses
        # the IDL once, so every session inherits both.
        prefork_callback=functools.partial(prepare_emulator, args.system_lib),
    )
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: server.terminate())
    print(f"board server listening on {args.host}:{server.port}", flush=True)
    while not server.wait(0.25):
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
