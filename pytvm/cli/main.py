"""Entry point of the ``pytvm`` command: every subcommand on one parser (see ``_command``)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from pytvm.cli import (
    _command,
    compile_model,
    info,
    micro,
    rpc,
    run_model,
    trace,
    tune,
    viz_command,
)
from pytvm.cli._command import EXPECTED_ERRORS

__all__ = ["EXPECTED_ERRORS", "build_parser", "main"]

# Each subcommand module exposes ``add_parser(subparsers)`` and ``run(args) -> int``.
_SUBCOMMANDS: tuple[_command.Subcommand, ...] = (
    compile_model,
    info,
    micro,
    rpc,
    run_model,
    trace,
    tune,
    viz_command,
)


def build_parser() -> argparse.ArgumentParser:
    """Return the ``pytvm`` parser with every subcommand registered."""
    return _command.build_parser(_SUBCOMMANDS)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``pytvm`` command with ``argv`` (default: ``sys.argv[1:]``) and return its status.

    Bad arguments exit with status 2 (argparse); an expected error (:data:`EXPECTED_ERRORS`)
    prints ``pytvm <subcommand>: error: <message>`` to stderr and returns 1; an interrupt
    returns 130.
    """
    return _command.main(argv, _SUBCOMMANDS)


if __name__ == "__main__":
    raise SystemExit(main())
