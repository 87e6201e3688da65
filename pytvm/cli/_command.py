"""Parser building and error handling shared by ``pytvm`` and each ``python -m pytvm.cli.<sub>``.

A subcommand module exposes ``add_parser(subparsers)`` and ``run(args) -> int``; this module
registers such modules on a ``pytvm`` parser and runs the chosen one, turning the errors a user
can cause (no tracker, no compiler, a port in use) into one line on stderr. It imports no
subcommand, so every subcommand can run itself through it.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Sequence
from typing import Protocol

import pytvm
from pytvm.ffi.errors import TVMError

__all__ = ["EXPECTED_ERRORS", "Subcommand", "build_parser", "main"]

#: Errors that report a problem with the environment or the input, not a bug in pytvm: the
#: command prints them as one line (``--debug`` or ``PYTVM_DEBUG=1``: the traceback).
EXPECTED_ERRORS: tuple[type[BaseException], ...] = (TVMError, OSError, subprocess.SubprocessError)


class Subcommand(Protocol):
    """What a subcommand module provides (``pytvm.cli.info``, ``pytvm.cli.rpc``, ...)."""

    def add_parser(
        self, subparsers: argparse._SubParsersAction[argparse.ArgumentParser]
    ) -> argparse.ArgumentParser: ...

    def run(self, args: argparse.Namespace) -> int: ...


class _HelpFormatter(argparse.HelpFormatter):
    """Help that states each option's default, unless its text already does or it has none."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        default = action.default
        if "%(default)" in text or "(default:" in text:
            return text
        if default is None or default is False or default == "" or default is argparse.SUPPRESS:
            return text
        return f"{text} (default: %(default)s)"


def _parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """``parser`` and every subcommand parser below it."""
    found = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                found += _parsers(sub)
    return found


def build_parser(subcommands: Sequence[Subcommand]) -> argparse.ArgumentParser:
    """Return a ``pytvm`` parser with each of ``subcommands`` registered."""
    parser = argparse.ArgumentParser(
        prog="pytvm",
        description="TVM's runtime and compiler stack in Python.",
        epilog="Errors print one line; --debug (or PYTVM_DEBUG=1) shows the traceback.",
    )
    parser.add_argument("--version", action="version", version=f"pytvm {pytvm.__version__}")
    parser.add_argument(
        "--debug", action="store_true", help="show the traceback of an error (or PYTVM_DEBUG=1)"
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in subcommands:
        module.add_parser(subparsers).set_defaults(run=module.run)
    for each in _parsers(parser):
        each.formatter_class = _HelpFormatter
    return parser


def _chosen_prog(parser: argparse.ArgumentParser, args: argparse.Namespace) -> str:
    """The ``prog`` of the innermost subcommand ``args`` chose (``pytvm rpc query``)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and action.dest != argparse.SUPPRESS:
            chosen = action.choices.get(getattr(args, action.dest, None) or "")
            if chosen is not None:
                return _chosen_prog(chosen, args)
    return parser.prog


def _debug_requested(args: argparse.Namespace) -> bool:
    return bool(args.debug) or os.environ.get("PYTVM_DEBUG", "") not in ("", "0")


def main(argv: Sequence[str] | None, subcommands: Sequence[Subcommand]) -> int:
    """Parse ``argv`` (default: ``sys.argv[1:]``) with :func:`build_parser` and run the choice.

    Bad arguments exit with status 2 (argparse); an expected error (:data:`EXPECTED_ERRORS`)
    prints ``pytvm <subcommand>: error: <message>`` to stderr and returns 1; an interrupt
    returns 130.
    """
    parser = build_parser(subcommands)
    args = parser.parse_args(argv)
    prog = _chosen_prog(parser, args)
    try:
        status: int = args.run(args)
    except EXPECTED_ERRORS as err:
        if _debug_requested(args):
            raise
        message = str(err).strip() or type(err).__name__
        print(f"{prog}: error: {message}", file=sys.stderr, flush=True)
        return 1
    except KeyboardInterrupt:
        if _debug_requested(args):
            raise
        print(f"{prog}: interrupted", file=sys.stderr, flush=True)
        return 130
    return status
