"""Trace a remote copy: ``with pytvm.trace() as t:`` records every layer the call crosses, in this
process and on the server, and renders the call tree as text or as a Chrome/Perfetto trace.

Run: ``python examples/05_trace.py``.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import numpy as np

import pytvm
from pytvm import rpc


def main() -> None:
    """Copy an array to a server under a trace; print the tree, save the Chrome trace."""
    with rpc.Server(host="127.0.0.1", port=0, silent=True) as server:
        with rpc.connect("127.0.0.1", server.port) as sess:
            a = pytvm.nd.empty((4,), "float32", sess.cpu())
            with pytvm.trace() as t:  # the session is live: its server records too
                a.copyfrom(np.arange(4, dtype="float32"))
            print(t)  # the same as t.text(): one line per layer, indented by call depth
            print(repr(t))

            with tempfile.TemporaryDirectory(prefix="pytvm-trace-") as tmp:
                path = Path(tmp) / "copy.trace.json"
                t.save_chrome(path)  # open it at https://ui.perfetto.dev
                events = json.loads(path.read_text())["traceEvents"]
                print(f"wrote {path.name}: {len(events)} Chrome trace events")


if __name__ == "__main__":
    main()
