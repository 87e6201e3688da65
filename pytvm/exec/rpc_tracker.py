"""``python -m pytvm.exec.rpc_tracker``: TVM's ``tvm.exec.rpc_tracker`` options, pytvm's tracker.

Runs ``pytvm rpc tracker`` (:mod:`pytvm.cli.rpc`) until SIGINT/SIGTERM. Options as TVM 0.27's:
``--host`` (default 0.0.0.0, TVM's), ``--port`` (9190), ``--port-end`` (default
max(9199, port + 100)), ``--silent``.

Examples
--------
.. code-block:: sh

    python -m pytvm.exec.rpc_tracker --port 9190
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from ._tvm_options import parser, run_rpc

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Parse TVM's options from ``argv`` (default ``sys.argv[1:]``), serve; the exit status."""
    p = parser("Start an RPC tracker (TVM's tvm.exec.rpc_tracker options).")
    p.add_argument("--host", default="0.0.0.0", help="address to listen on")
    p.add_argument("--port", type=int, default=9190, help="first port to try")
    p.add_argument("--port-end", type=int, help="one past the last port to try")
    p.add_argument("--silent", action="store_true", help="log only warnings")
    args = p.parse_args(argv)
    return run_rpc(
        "tracker",
        {"host": args.host, "port": args.port, "port-end": args.port_end, "silent": args.silent},
    )


if __name__ == "__main__":
    sys.exit(main())
