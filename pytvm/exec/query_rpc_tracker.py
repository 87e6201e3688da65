"""``python -m pytvm.exec.query_rpc_tracker``: TVM's options, pytvm's ``pytvm rpc query``.

Prints the tracker's servers and queues. ``--host`` defaults to ``$TVM_TRACKER_HOST`` (else
127.0.0.1), ``--port`` to ``$TVM_TRACKER_PORT`` (else 9190), as in TVM 0.27.

Examples
--------
.. code-block:: sh

    python -m pytvm.exec.query_rpc_tracker --port 9190
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from ._tvm_options import parser, run_rpc

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Parse TVM's options from ``argv`` (default ``sys.argv[1:]``), query; the exit status."""
    p = parser("Query an RPC tracker (TVM's tvm.exec.query_rpc_tracker options).")
    p.add_argument("--host", default="", help="the tracker's host")
    p.add_argument("--port", type=int, help="the tracker's port")
    args = p.parse_args(argv)
    host = args.host or os.environ.get("TVM_TRACKER_HOST", "127.0.0.1")
    port = args.port or int(os.environ.get("TVM_TRACKER_PORT", "9190"))
    return run_rpc("query", {"host": host, "port": port})


if __name__ == "__main__":
    sys.exit(main())
