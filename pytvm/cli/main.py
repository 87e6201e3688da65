"""Entry point of the ``pytvm`` command: builds the parser and dispatches to a subcommand."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from pytvm.cli import info, rpc, trace

__all__ = ["build_parser", "main"]

# Each subcommand module exposes ``add_parser(subparsers)`` and ``run(args) -> int``.
_SUBCOMMANDS = (info, rpc, trace)


def build_parser() -> argparse.ArgumentParser:
    """Return the ``pytvm`` parser with every subcommand registered."""
    parser = argparse.ArgumentParser(
        prog="pytvm", description="TVM's runtime and compiler stack in Python."
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in _SUBCOMMANDS:
        module.add_parser(subparsers).set_defaults(run=module.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``pytvm`` command with ``argv`` (default: ``sys.argv[1:]``) and return its status."""
    args = build_parser().parse_args(argv)
    status: int = args.run(args)
    return status


if __name__ == "__main__":
    raise SystemExit(main())
