"""The accelerator path of seed 000: a board-side transport channel to an accelerator process
(over the stub generated from ``hexagon_rpc.idl``, see :mod:`pytvm.hexagon.idl`), the session
constructor a board server runs, and a launcher that sets the board up."""

from __future__ import annotations

import sys
import types

from ..ffi.device import Device
from ..ffi.device import hexagon as _hexagon_device
from .channel import HexagonTransportChannel
from .launcher import AdbShell, Launcher, LocalShell, Shell
from .session import create_session
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
    "create_session",
]


class _CallableModule(types.ModuleType):
    """``pytvm.hexagon`` is both this package and the device constructor ``pytvm.hexagon(0)``:
    importing the package replaces the attribute, so the package answers calls the same way."""

    def __call__(self, dev_id: int = 0) -> Device:
        return _hexagon_device(dev_id)


sys.modules[__name__].__class__ = _CallableModule
