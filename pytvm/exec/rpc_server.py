"""``python -m pytvm.exec.rpc_server``: TVM's ``tvm.exec.rpc_server`` options, pytvm's server.

Runs ``pytvm rpc server`` (:mod:`pytvm.cli.rpc`) until SIGINT/SIGTERM. Options as TVM 0.27's:
``--host`` (default 0.0.0.0, TVM's: reachable from other machines), ``--port`` (9090),
``--port-end`` (default max(9199, port + 100)), ``--tracker host:port``, ``--key`` (required with
``--tracker``), ``--through-proxy``, ``--custom-addr``, ``--load-library``, ``--silent``,
``--no-fork``.

Examples
--------
.. code-block:: sh

    python -m pytvm.exec.rpc_server --tracker 127.0.0.1:9190 --key cpu
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from ._tvm_options import parser, run_rpc

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Parse TVM's options from ``argv`` (default ``sys.argv[1:]``), serve; the exit status."""
    p = parser("Start an RPC server (TVM's tvm.exec.rpc_server options).")
    p.add_argument("--host", default="0.0.0.0", help="address to listen on (or the proxy's)")
    p.add_argument("--port", type=int, default=9090, help="first port to try (or the proxy's)")
    p.add_argument("--port-end", type=int, help="one past the last port to try")
    p.add_argument(
        "--through-proxy", action="store_true", help="--host and --port name a proxy to dial"
    )
    p.add_argument("--tracker", help="register with the tracker at host:port")
    p.add_argument("--key", default="", help="the key identifying the device type in the tracker")
    p.add_argument("--silent", action="store_true", help="log only warnings")
    p.add_argument("--load-library", help="colon-separated libraries to load per session")
    p.add_argument(
        "--no-fork", dest="fork", action="store_false", help="accepted for TVM compatibility"
    )
    p.add_argument("--custom-addr", help="address to report to the tracker")
    args = p.parse_args(argv)
    if args.tracker and not args.key:
        p.error("--key is required with --tracker (the type of device the tracker hands out)")
    return run_rpc(
        "server",
        {
            "host": args.host,
            "port": args.port,
            "port-end": args.port_end,
            "through-proxy": args.through_proxy,
            "tracker": args.tracker,
            "key": args.key or None,
            "silent": args.silent,
            "load-library": args.load_library,
            "no-fork": not args.fork,
            "custom-addr": args.custom_addr,
        },
    )


if __name__ == "__main__":
    sys.exit(main())
