"""The accelerator IDL tool: ``python -m pytvm.contrib.hexagon.idl`` writes the C skel of an IDL
file, and this module gathers the IDL's public names.

FastRPC generates, from ``hexagon_rpc.idl``, a board-side *stub* (the functions the board calls)
and a DSP-side *skel* (which receives the calls and dispatches them to the implementation); seed
000's ``HexagonTransportChannel`` calls ``hexagon_rpc_open/send/receive/close`` through them.
pytvm does the same for its accelerator emulator, in four parts:

* :mod:`~pytvm.contrib.hexagon.idl_parser` reads the IDL into frozen dataclasses;
* :mod:`~pytvm.contrib.hexagon.wire` is the request/reply format both sides speak;
* :mod:`~pytvm.contrib.hexagon.skel_generator` writes the C99 skel from template files;
* :mod:`~pytvm.contrib.hexagon.stub` is the board side: a hand-written class that marshals
  each call from the parsed interface, so stub and skel come from the same file.

The build (``pytvm/src/crt/device/skel.mk``) runs::

    python -m pytvm.contrib.hexagon.idl --skel-h out/x_skel.h --skel-c out/x_skel.c x.idl
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from .idl_parser import IDLError, Interface, Method, Param, parse, parse_file
from .skel_generator import generate_skel_c, generate_skel_header
from .stub import HexagonRpcStub, StatusError, Stub, StubError
from .wire import DEFAULT_MAX_MESSAGE, SKEL_STATUSES, TYPES

__all__ = [
    "DEFAULT_MAX_MESSAGE",
    "SKEL_STATUSES",
    "TYPES",
    "HexagonRpcStub",
    "IDLError",
    "Interface",
    "Method",
    "Param",
    "StatusError",
    "Stub",
    "StubError",
    "generate_skel_c",
    "generate_skel_header",
    "main",
    "parse",
    "parse_file",
]

PROG = "python -m pytvm.contrib.hexagon.idl"


def _write(path: str, text: str) -> None:
    """Write ``text`` to ``path`` atomically (a reader never sees half a file)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    staged = target.with_name(target.name + ".tmp")
    staged.write_text(text, encoding="utf-8")
    staged.replace(target)


def main(argv: Sequence[str] | None = None) -> int:
    """``[--skel-h F] [--skel-c F] IDL``: check the IDL and write the named outputs.

    Returns 0, or 1 after printing ``<file>:<line>: <problem>`` to stderr.
    """
    ap = argparse.ArgumentParser(prog=PROG, description="Generate the C skel of an IDL file.")
    ap.add_argument("idl", help="the IDL file")
    ap.add_argument("--skel-c", help="write the C skel here")
    ap.add_argument("--skel-h", help="write the skel header here")
    ns = ap.parse_args(argv)
    try:
        iface = parse_file(ns.idl)
    except (OSError, IDLError) as err:
        print(f"{PROG}: {err}", file=sys.stderr)
        return 1
    writers: tuple[tuple[str | None, Callable[[Interface], str]], ...] = (
        # the header first: build rules rely on the .c being the newer file
        (ns.skel_h, generate_skel_header),
        (ns.skel_c, generate_skel_c),
    )
    for path, generate in writers:
        if path is not None:
            _write(path, generate(iface))
    return 0


if __name__ == "__main__":
    sys.exit(main())
