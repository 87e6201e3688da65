"""The session constructor a board server runs for ``session_constructor_args`` (seed 000's
``tvm.contrib.hexagon.create_hexagon_session``): open the accelerator link and return a client
session over it, which becomes the board server's serving session.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ...ffi.registry import register_func
from ...rpc.sessions.forwarding_session import connect_channel
from ...rpc.sessions.session import SessionModule
from .channel import HexagonTransportChannel
from .transport import StubTransport, Transport

__all__ = ["CONSTRUCTOR", "open_accelerator_session", "prepare_emulator"]

#: The global function name clients put first in ``session_constructor_args``.
CONSTRUCTOR = "pytvm.hexagon.create_session"

#: URI of the accelerator's RPC server (the skel library on a real DSP).
DEFAULT_URI = "pytvm_hexagon_rpc_skel.so?domain=cdsp"


#: C sources of kernels (``pytvm.build(..., target="c --system-lib")``) linked into the
#: emulator, so ``sess.system_lib()["name"]`` runs them on the accelerator (board ``--system-lib``).
EMULATOR_SYSTEM_LIB: list[str] = []


def prepare_emulator(system_lib: Sequence[str] = ()) -> None:
    """Link ``system_lib`` (C kernel sources) into the emulator, build it (or find it built)
    and parse the IDL: a board server's fork server runs this once, before it forks any session
    worker, so every session inherits both instead of redoing them.
    """
    from ...crt.build import device_binary  # the emulator binary, built on first use
    from .stub import hexagon_rpc_interface

    EMULATOR_SYSTEM_LIB[:] = [str(Path(p).resolve()) for p in system_lib]
    device_binary(system_lib=EMULATOR_SYSTEM_LIB)
    hexagon_rpc_interface()


def _default_transport() -> Transport:
    """The emulator behind the generated hexagon_rpc stub and skel (seed 000's FastRPC path)."""
    from ...crt.build import device_binary  # the emulator binary, built on first use

    return StubTransport(device_binary(system_lib=EMULATOR_SYSTEM_LIB))


@register_func(CONSTRUCTOR, override=True)
def open_accelerator_session(session_name: str, stack_size: int = 1 << 14) -> SessionModule:
    """Open the accelerator transport and return a session over it (registered as the global
    function ``pytvm.hexagon.create_session``, the name clients pass).
    """
    channel = HexagonTransportChannel(_default_transport(), DEFAULT_URI, int(stack_size))
    return SessionModule(connect_channel(channel, f"{session_name} ({channel.peer})"))
