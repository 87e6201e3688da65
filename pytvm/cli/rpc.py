"""``pytvm rpc``: run an RPC tracker, proxy or server, or query a tracker's status."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["add_parser", "run"]

#: Environment variable the server's auth token may come from (not shown by ``ps``).
TOKEN_ENV = "PYTVM_RPC_AUTH_TOKEN"


#: Without --port-end the range follows --port (TVM's 9199 alone is empty for --port 9300).
_PORT_END_HELP = "one past the last port to try (default: max(9199, port + 100))"


def _address(text: str) -> tuple[str, int]:
    """``"host:port"`` -> ``(host, port)``, as an argparse type."""
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise argparse.ArgumentTypeError(f"expected host:port, got {text!r}")
    return host, int(port)


def add_parser(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    """Register ``rpc`` and its ``tracker``/``query``/``proxy``/``server`` commands."""
    parser = subparsers.add_parser(
        "rpc",
        help="run an RPC tracker, proxy or server, or query a tracker",
        description="TVM-compatible RPC services.",
    )
    commands = parser.add_subparsers(dest="rpc_command", metavar="RPC_COMMAND", required=True)

    tracker = commands.add_parser("tracker", help="run an RPC tracker until SIGINT/SIGTERM")
    tracker.add_argument("--host", default="127.0.0.1", help="address to listen on")
    tracker.add_argument("--port", type=int, default=9190, help="first port to try")
    tracker.add_argument("--port-end", type=int, help=_PORT_END_HELP)
    tracker.add_argument("--silent", action="store_true", help="log only warnings")
    tracker.add_argument(
        "--token", help="servers must prove this token to register (visible in ps: prefer below)"
    )
    tracker.add_argument(
        "--token-file", help="read the token from this file (or set $PYTVM_TRACKER_TOKEN)"
    )

    query = commands.add_parser("query", help="print a tracker's server list and queues")
    query.add_argument(
        "--host",
        default=os.environ.get("TVM_TRACKER_HOST", "127.0.0.1"),
        help="tracker host (default: $TVM_TRACKER_HOST or 127.0.0.1)",
    )
    query.add_argument(
        "--port",
        type=int,
        default=int(os.environ.get("TVM_TRACKER_PORT", "9190")),
        help="tracker port (default: $TVM_TRACKER_PORT or 9190)",
    )
    query.add_argument(
        "--connect-timeout", type=float, default=5.0, help="seconds to retry a refused connect"
    )

    proxy = commands.add_parser("proxy", help="run an RPC proxy until SIGINT/SIGTERM")
    proxy.add_argument("--host", default="127.0.0.1", help="address to listen on")
    proxy.add_argument("--port", type=int, default=9091, help="first port to try")
    proxy.add_argument("--port-end", type=int, help=_PORT_END_HELP)
    proxy.add_argument("--tracker", type=_address, help="register servers with host:port")
    proxy.add_argument(
        "--tracker-token-file", help="the tracker's token (or set $PYTVM_TRACKER_TOKEN)"
    )

    server = commands.add_parser("server", help="run an RPC server until SIGINT/SIGTERM")
    server.add_argument("--host", default="127.0.0.1", help="address to listen on (or proxy)")
    server.add_argument("--port", type=int, default=9090, help="first port to try (or proxy's)")
    server.add_argument("--port-end", type=int, help=_PORT_END_HELP)
    server.add_argument("--key", default="", help="rpc key (required with --tracker)")
    server.add_argument("--tracker", type=_address, help="register with the tracker host:port")
    server.add_argument("--custom-addr", help="address to report to the tracker")
    server.add_argument(
        "--tracker-token-file", help="the tracker's token (or set $PYTVM_TRACKER_TOKEN)"
    )
    server.add_argument(
        "--through-proxy", action="store_true", help="--host/--port name a proxy to dial"
    )
    token = server.add_mutually_exclusive_group()
    token.add_argument(
        "--auth-token",
        help="token clients must present (visible in ps; prefer --auth-token-file or "
        f"${TOKEN_ENV})",
    )
    token.add_argument(
        "--auth-token-file", metavar="PATH", help="read the token from the first line of PATH"
    )
    server.add_argument(
        "--allow-popen-binary",
        action="store_true",
        help="let clients run an executable they send to rpc.PopenSession (off by default)",
    )
    server.add_argument(
        "--popen-executable",
        action="append",
        default=[],
        metavar="PATH",
        help="an executable clients may start with rpc.PopenSession(PATH) (repeatable)",
    )
    server.add_argument("--load-library", help="colon-separated libraries to load per session")
    server.add_argument("--silent", action="store_true", help="log only warnings")
    server.add_argument(
        "--timeout", type=float, help="session time limit in seconds (also bounds the handshake)"
    )
    server.add_argument(
        "--max-sessions", type=int, help="refuse clients while this many sessions run"
    )
    server.add_argument(
        "--idle-timeout",
        type=float,
        help="close a session that sends no complete request for this many seconds",
    )
    server.add_argument(
        "--spare-workers", type=int, help="session workers forked ahead (default: by cores)"
    )
    server.add_argument(
        "--no-fork", action="store_true", help="accepted for TVM compatibility (see Server)"
    )
    server.set_defaults(rpc_server_parser=server)
    return parser


def _serve_until_signal(service: Any, wait: Callable[[], object], banner: str) -> None:
    """Install SIGINT/SIGTERM handlers that terminate ``service``, print ``banner`` (so whoever
    reads it may signal at once), and return once ``wait`` does.

    ``wait`` runs in a helper thread while the main thread joins it in short slices: Python runs
    signal handlers only in the main thread, and a signal the kernel delivers to another thread
    would otherwise go unnoticed while the main thread sleeps in an untimed join.
    """

    def _stop(signum: int, frame: object) -> None:
        del signum, frame
        service.terminate()

    previous = {sig: signal.signal(sig, _stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    print(banner, flush=True)
    waiter = threading.Thread(target=wait, name="pytvm-rpc-wait", daemon=True)
    try:
        waiter.start()
        while waiter.is_alive():
            waiter.join(0.25)
    finally:
        service.terminate()
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _setup_logging(silent: bool) -> None:
    logging.basicConfig(
        level=logging.WARNING if silent else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )


def _run_tracker(args: argparse.Namespace) -> int:
    from pytvm.rpc.services.tracker import Tracker

    _setup_logging(args.silent)
    from pytvm.rpc.wire._auth import resolve_token

    tracker = Tracker(
        host=args.host,
        port=args.port,
        port_end=args.port_end,
        silent=args.silent,
        token=resolve_token(args.token, args.token_file),
    )
    banner = f"tracker listening on {args.host}:{tracker.port}"
    _serve_until_signal(tracker, tracker.serve_forever, banner)
    return 0


def _run_query(args: argparse.Namespace) -> int:
    from pytvm.rpc.sessions.tracker_client import connect_tracker

    with connect_tracker(args.host, args.port, connect_timeout=args.connect_timeout) as session:
        print(f"Tracker address {args.host}:{args.port}\n")
        print(session.text_summary(), end="", flush=True)
    return 0


def _run_proxy(args: argparse.Namespace) -> int:
    from pytvm.rpc.services.proxy import Proxy

    _setup_logging(False)
    from pytvm.rpc.wire._auth import resolve_token

    token = resolve_token(None, args.tracker_token_file) if args.tracker else None
    proxy = Proxy(
        host=args.host,
        port=args.port,
        port_end=args.port_end,
        tracker_addr=args.tracker,
        tracker_token=token,
    )
    _serve_until_signal(proxy, proxy.serve_forever, f"proxy listening on {args.host}:{proxy.port}")
    return 0


def _auth_token(args: argparse.Namespace) -> str | None:
    """The server's token: ``--auth-token``, ``--auth-token-file`` or ``$PYTVM_RPC_AUTH_TOKEN``."""
    if args.auth_token is not None:
        logging.getLogger("pytvm.rpc.server").warning(
            "--auth-token is visible to every user of this machine (ps); pass "
            "--auth-token-file PATH or set %s instead",
            TOKEN_ENV,
        )
        return str(args.auth_token)
    if args.auth_token_file is not None:
        try:
            with Path(args.auth_token_file).open(encoding="utf-8") as f:
                token = f.readline().strip()
        except OSError as err:
            args.rpc_server_parser.error(f"--auth-token-file: {err}")
        if not token:
            args.rpc_server_parser.error(f"--auth-token-file: {args.auth_token_file} is empty")
        return token
    return os.environ.get(TOKEN_ENV) or None


def _run_server(args: argparse.Namespace) -> int:
    if args.tracker and not args.key:
        args.rpc_server_parser.error("--key is required with --tracker")
    from pytvm.rpc.services.server import Server
    from pytvm.rpc.wire._auth import resolve_token

    _setup_logging(args.silent)
    auth_token = _auth_token(args)
    server = Server(
        host=args.host,
        port=args.port,
        port_end=args.port_end,
        key=args.key,
        tracker_addr=args.tracker,
        tracker_token=resolve_token(None, args.tracker_token_file) if args.tracker else None,
        custom_addr=args.custom_addr,
        is_proxy=args.through_proxy,
        auth_token=auth_token,
        load_library=args.load_library,
        silent=args.silent,
        timeout=args.timeout,
        max_sessions=args.max_sessions,
        idle_timeout=args.idle_timeout,
        spare_workers=args.spare_workers,
        no_fork=args.no_fork,
        allow_popen_binary=args.allow_popen_binary,
        popen_executables=args.popen_executable,
    )
    where = "via proxy" if args.through_proxy else "listening on"
    _serve_until_signal(server, server.wait, f"server {where} {args.host}:{server.port}")
    return 0


_RUNNERS: dict[str, Callable[[argparse.Namespace], int]] = {
    "tracker": _run_tracker,
    "query": _run_query,
    "proxy": _run_proxy,
    "server": _run_server,
}


def run(args: argparse.Namespace) -> int:
    """Run the ``pytvm rpc`` command chosen by ``args.rpc_command``; return the exit status."""
    return _RUNNERS[args.rpc_command](args)


if __name__ == "__main__":
    from typing import cast

    from pytvm.cli import _command

    # Runs through the shared error handling without importing pytvm.cli.main.
    this = cast(_command.Subcommand, sys.modules[__name__])
    sys.exit(_command.main(["rpc", *sys.argv[1:]], [this]))
