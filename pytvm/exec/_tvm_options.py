"""Running a ``pytvm rpc`` command from a TVM-style command line (shared by the exec modules)."""

from __future__ import annotations

import argparse

from pytvm.cli import _command
from pytvm.cli import rpc as cli_rpc

__all__ = ["parser", "run_rpc"]


def parser(description: str) -> argparse.ArgumentParser:
    """An argument parser for a TVM exec module (its usage names ``python -m``)."""
    return argparse.ArgumentParser(description=description)


def run_rpc(command: str, options: dict[str, object]) -> int:
    """Run ``pytvm rpc <command>`` with ``options`` (``--name value``; True for a flag, None or
    False to leave one out) through the CLI's error handling; return its exit status.
    """
    argv = ["rpc", command]
    for name, value in options.items():
        if value is None or value is False:
            continue
        argv.append(f"--{name}")
        if value is not True:
            argv.append(str(value))
    return _command.main(argv, [cli_rpc])
