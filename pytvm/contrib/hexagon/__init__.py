"""The accelerator path of seed 000: a board-side transport channel to an accelerator process
(over the stub and skel of ``hexagon_rpc.idl``, see :mod:`pytvm.contrib.hexagon.idl`), the
session constructor a board server runs, and a launcher that sets the board up.

The device constructor keeps TVM's top-level name, ``pytvm.hexagon(0)``; this package lives
under ``contrib`` as TVM's ``tvm.contrib.hexagon`` does, so no name is both.
"""

from __future__ import annotations

from .channel import HexagonTransportChannel
from .launcher import AdbShell, Launcher, LocalShell, Shell
from .session import open_accelerator_session
from .transport import PipeTransport, StubTransport, Transport

__all__ = [
    "AdbShell",
    "HexagonTransportChannel",
    "Launcher",
    "LocalShell",
    "PipeTransport",
    "Shell",
    "StubTransport",
    "Transport",
    "open_accelerator_session",
]
