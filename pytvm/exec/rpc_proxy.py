"""``python -m pytvm.exec.rpc_proxy``: TVM's ``tvm.exec.rpc_proxy`` options, pytvm's proxy.

Runs ``pytvm rpc proxy`` (:mod:`pytvm.cli.rpc`) until SIGINT/SIGTERM. Options as TVM 0.27's:
``--host`` (127.0.0.1), ``--port`` (9090), ``--port-end`` (default max(9199, port + 100)),
``--tracker host:port``. pytvm's proxy relays TCP only: ``--web-port`` is accepted and ignored
(with a warning), and ``--example-rpc`` (the browser RPC pages) is refused.

Examples
--------
.. code-block:: sh

    python -m pytvm.exec.rpc_proxy --port 9090 --tracker 127.0.0.1:9190
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from ._tvm_options import parser, run_rpc

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Parse TVM's options from ``argv`` (default ``sys.argv[1:]``), serve; the exit status."""
    p = parser("Start an RPC proxy (TVM's tvm.exec.rpc_proxy options).")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on")
    p.add_argument("--port", type=int, default=9090, help="first port to try")
    p.add_argument("--port-end", type=int, help="one past the last port to try")
    p.add_argument("--web-port", type=int, help="ignored: pytvm's proxy has no HTTP server")
    p.add_argument(
        "--example-rpc",
        default="",
        help="refused when true: pytvm has no browser RPC pages",
    )
    p.add_argument("--tracker", default="", help="register servers with the tracker host:port")
    args = p.parse_args(argv)
    if args.example_rpc not in ("", "0", "False", "false"):
        p.error("--example-rpc: pytvm's proxy relays TCP sessions only; no browser RPC pages")
    if args.web_port is not None:
        print(
            "rpc_proxy: --web-port ignored: pytvm's proxy has no HTTP/WebSocket server",
            file=sys.stderr,
            flush=True,
        )
    return run_rpc(
        "proxy",
        {
            "host": args.host,
            "port": args.port,
            "port-end": args.port_end,
            "tracker": args.tracker or None,
        },
    )


if __name__ == "__main__":
    sys.exit(main())
