"""``python -m pytvm.rpc.services.pipe_server <read_fd> <write_fd>``: serve one RPC session over two
pipes, the ``rpc.PopenSession`` convention (no handshake; exits when the client is done).

Like a server worker it serves in a temporary workspace of its own, removed at exit, with the
server's functions confined to it (:func:`pytvm.rpc.services.server_env.register_server_env`).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from ..sessions.endpoint import serve
from ..sessions.workspace import Workspace
from ..wire.channel import PipeChannel
from .server_env import register_server_env

__all__ = ["main"]

#: ``<read_fd> <write_fd>``.
_ARG_COUNT = 2


def main(argv: Sequence[str] | None = None) -> int:
    """Serve on the two file descriptors given as arguments; returns the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != _ARG_COUNT or not all(a.isdigit() for a in args):
        print(
            "usage: python -m pytvm.rpc.services.pipe_server <read_fd> <write_fd>", file=sys.stderr
        )
        return 2
    with Workspace.create("pytvm-pipe-") as workspace:
        register_server_env(workspace)
        serve(PipeChannel(int(args[0]), int(args[1]), peer="popen parent"), "pipe server")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
