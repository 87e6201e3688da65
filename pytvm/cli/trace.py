"""``pytvm trace``: record a call across every layer and hop and print its trace.

``pytvm trace copy`` runs seed 000's copy: a tracker and a board server
(``python -m pytvm.contrib.hexagon.board``) in subprocesses, a session requested through the tracker
with the accelerator constructor ``pytvm.hexagon.create_session``, then::

    A = pytvm.nd.empty((2,), "int32", sess.hexagon(0))
    with pytvm.trace() as t:
        A.copyfrom(np.array([2, 3], "int32"))

and prints ``t.text()``. With ``--mermaid`` standard output is the Mermaid sequence diagram and
nothing else (paste-ready; the text goes to standard error); ``--chrome OUT.json`` also writes
Chrome trace JSON for https://ui.perfetto.dev.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from typing import TYPE_CHECKING

from pytvm.ffi.errors import TVMError
from pytvm.rpc.wire.channel import reap

if TYPE_CHECKING:
    from pytvm.viz.trace import Trace

__all__ = ["add_parser", "run", "trace_copy"]

#: The tracker key the board registers under.
KEY = "pytvm-trace-board"


def add_parser(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    """Register ``trace`` and its scenarios on ``subparsers`` and return its parser."""
    parser = subparsers.add_parser(
        "trace",
        help="print the trace of a call across every layer and hop",
        description="Record a call with pytvm.trace() and print what every layer did.",
    )
    scenarios = parser.add_subparsers(dest="scenario", metavar="SCENARIO", required=True)
    copy = scenarios.add_parser(
        "copy",
        help="seed 000: A.copyfrom(np.array([2, 3])) on a hexagon device behind a board",
        description="host -> tracker -> board server -> accelerator emulator (MinRPC in C)",
    )
    copy.add_argument("--chrome", metavar="OUT.json", help="also write Chrome trace JSON")
    copy.add_argument(
        "--mermaid",
        action="store_true",
        help="print only the Mermaid diagram on stdout (the text tree goes to stderr)",
    )
    return parser


@contextmanager
def _service(argv: Sequence[str], what: str) -> Iterator[int]:
    """Start ``argv``, wait for its ``... listening on HOST:PORT`` banner, yield the port;
    terminate it on exit.
    """
    proc = subprocess.Popen(list(argv), stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        banner = proc.stdout.readline()
        if "listening on" not in banner:
            raise TVMError(f"the {what} did not start ({' '.join(argv)}): {banner!r}")
        yield int(banner.rsplit(":", 1)[1])
    finally:
        reap(proc, timeout=10, terminate=True)


def trace_copy() -> Trace:
    """Run seed 000's copy under ``pytvm.trace()``; returns the trace (``pytvm.viz.Trace``)."""
    import numpy as np

    import pytvm
    from pytvm.crt import device_binary
    from pytvm.ffi.errors import TVMValueError
    from pytvm.rpc.sessions.tracker_client import connect_tracker

    device_binary()  # build the accelerator emulator once, before the board needs it
    python = sys.executable
    with ExitStack() as stack:
        tracker_argv = [python, "-m", "pytvm.cli", "rpc", "tracker", "--port", "0"]
        tracker_argv += ["--port-end", "1", "--silent"]
        tracker_port = stack.enter_context(_service(tracker_argv, "tracker"))
        board = [python, "-m", "pytvm.contrib.hexagon.board", "--port", "0", "--port-end", "1"]
        board += ["--tracker", f"127.0.0.1:{tracker_port}", "--key", KEY]
        stack.enter_context(_service(board, "board server"))
        with connect_tracker("127.0.0.1", tracker_port) as tracker:
            sess = tracker.request(  # the board registers just after its banner: wait for it
                KEY,
                session_constructor_args=["pytvm.hexagon.create_session", "trace", 16384],
                timeout=60,
                wait_for_unknown_key=True,
            )
        stack.callback(sess.close)
        A = pytvm.nd.empty((2,), "int32", sess.hexagon(0))
        with pytvm.trace() as t:
            A.copyfrom(np.array([2, 3], "int32"))
        if A.numpy().tolist() != [2, 3]:
            raise TVMValueError(f"the copy did not land: A = {A.numpy().tolist()}")
        return t


def run(args: argparse.Namespace) -> int:
    """Run the scenario and print its trace (only the diagram on stdout with ``--mermaid``)."""
    t = trace_copy()
    if args.mermaid:
        print(t.text(), end="", file=sys.stderr, flush=True)
        print(t.mermaid(), end="", flush=True)
    else:
        print(t.text(), end="", flush=True)
    if args.chrome:
        t.save_chrome(args.chrome)
        print(f"wrote {args.chrome} (open it at https://ui.perfetto.dev)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    from typing import cast

    from pytvm.cli import _command

    # Runs through the shared error handling without importing pytvm.cli.main.
    this = cast(_command.Subcommand, sys.modules[__name__])
    sys.exit(_command.main(["trace", *sys.argv[1:]], [this]))
