"""The ``qemu-cortex-m4`` template's platform: a board image built with the C runtime's
``board-image`` target, run in QEMU (``pytvm.crt.qemu.QemuBoard``), reached over its UART with
the serial framing (``rpc.connect_serial``).
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..crt.qemu import QEMU_MACHINES, QemuBoard
from ..ffi.errors import TVMError, TVMValueError
from .platforms import FlashedDevice, Platform, run_make
from .transport import SerialTransport, SessionTransport

__all__ = ["QemuPlatform", "missing_tools"]

CROSS_CC = "arm-none-eabi-gcc"
QEMU = "qemu-system-arm"


def missing_tools() -> list[str]:
    """The tools this platform needs that are not on PATH."""
    return [tool for tool in (CROSS_CC, QEMU, "make") if shutil.which(tool) is None]


class _QemuDevice(FlashedDevice):
    def __init__(self, board: QemuBoard) -> None:
        self.board = board

    def transport(self) -> SessionTransport:
        """The serial transport over the running board's UART."""
        board = self.board
        return SerialTransport(
            connect=lambda timeouts: board.connect_session(
                session_timeout=timeouts.session_established_timeout_sec
            ),
            stop=board.close,
            description=board.name,
        )


class QemuPlatform(Platform):
    """``make`` builds ``build/board/<board>/image.elf``; flashing starts QEMU with it."""

    name = "qemu"

    def project_mk(self, model_vars: Mapping[str, str], options: Mapping[str, Any]) -> str:
        """The model's variables, the board and its settings, as make assignments."""
        board = str(options["board"])
        if board not in QEMU_MACHINES:
            raise TVMValueError(
                f"qemu-cortex-m4: board {board!r} has no QEMU machine; known: "
                f"{sorted(QEMU_MACHINES)}"
            )
        settings = []
        if options.get("config_main_stack_size"):
            settings.append(f"BOARD_STACK_SIZE={int(options['config_main_stack_size'])}")
        values = {k: v for k, v in model_vars.items() if k != "SYSLIB_SRCS"}
        values |= {
            "BOARD": board,
            "BOARD_SETTINGS": " ".join(settings),
            "V": "1" if options["verbose"] else "0",
        }
        return "".join(f"{k} := {v}\n" for k, v in values.items())

    def build(self, project_dir: Path, options: Mapping[str, Any]) -> None:
        """Run the project's Makefile."""
        missing = [t for t in missing_tools() if t != QEMU]
        if missing:
            raise TVMError(
                f"building the qemu-cortex-m4 project needs {', '.join(missing)}; `make mcu` in "
                "the repository root installs the Arm cross compiler (Debian packages "
                "gcc-arm-none-eabi, libnewlib-arm-none-eabi)"
            )
        run_make(project_dir, [], float(options["build_timeout"]), f"project {project_dir}")

    def flash(self, project_dir: Path, options: Mapping[str, Any]) -> FlashedDevice:
        """The built image, ready for a transport."""
        board = str(options["board"])
        elf = project_dir / "build" / "board" / board / "image.elf"
        if not elf.is_file():
            raise TVMValueError(f"{elf} does not exist: call project.build() before flash()")
        machine, _cpu = QEMU_MACHINES[board]
        shift = options.get("icount_shift")
        qemu = QemuBoard(
            elf,
            machine=machine,
            icount_shift=None if shift is None else int(shift),
            timeout=float(options["connect_timeout"]),
        )
        return _QemuDevice(qemu.start())
