"""What each microTVM template does to build, flash and reach its device.

``host``: ``make`` links ``build/device`` (the CRT, MinRPC and the model in a process); flashing
is nothing; the transport starts the process with two pipes. ``qemu-cortex-m4``: ``make``
builds the board image with the C runtime's ``board-image`` target (``runtime/src/crt``,
``BOARD=mps2-an386``); flashing starts QEMU with it (``pytvm.crt.qemu.QemuBoard``); the
transport speaks the serial framing over the emulated UART (``rpc.connect_serial``).
"""

from __future__ import annotations

import abc
import shlex
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..ffi.errors import TVMError, TVMValueError
from .transport import HostTransport, SessionTransport

__all__ = ["FlashedDevice", "HostPlatform", "Platform", "run_make"]


class FlashedDevice(abc.ABC):
    """A device holding the project's build, ready for one transport."""

    @abc.abstractmethod
    def transport(self) -> SessionTransport:
        """The transport to this device (closing it ends the device)."""


class Platform(abc.ABC):
    """A template's build, flash and transport."""

    name: str

    @abc.abstractmethod
    def project_mk(self, model_vars: Mapping[str, str], options: Mapping[str, Any]) -> str:
        """The text of the project's ``project.mk``."""

    @abc.abstractmethod
    def build(self, project_dir: Path, options: Mapping[str, Any]) -> None:
        """Build the device image of the project."""

    @abc.abstractmethod
    def flash(self, project_dir: Path, options: Mapping[str, Any]) -> FlashedDevice:
        """Put the built image on a device."""


def _mk_lines(values: Mapping[str, Any]) -> str:
    return "".join(f"{k} := {v}\n" for k, v in values.items())


def _text(output: str | bytes | None) -> str:
    if isinstance(output, bytes):
        return output.decode(errors="replace")
    return output or ""


def run_make(project_dir: Path, args: Sequence[str], timeout: float, what: str) -> str:
    """Run ``make -C project_dir args``; its output, or ``TVMError`` with the compiler's output."""
    make = shutil.which("make")
    if make is None:
        raise TVMError(f"building {what} needs `make`; install it (e.g. apt install make)")
    cmd = [make, "-C", str(project_dir), "-j2", *args]
    try:
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as err:
        raise TVMError(
            f"building {what} took more than {timeout:g} s (option build_timeout):\n"
            f"$ {shlex.join(cmd)}\n{_text(err.stdout)}{_text(err.stderr)}"
        ) from err
    if result.returncode != 0:
        raise TVMError(
            f"building {what} failed (make exited with {result.returncode}):\n"
            f"$ {shlex.join(cmd)}\n{result.stdout}{result.stderr}"
        )
    return result.stdout + result.stderr


class _HostDevice(FlashedDevice):
    def __init__(self, binary: Path) -> None:
        self.binary = binary

    def transport(self) -> SessionTransport:
        """The transport that starts the process."""
        return HostTransport(self.binary)


class HostPlatform(Platform):
    """The ``host`` template: ``build/device`` served over two pipes."""

    name = "host"

    def project_mk(self, model_vars: Mapping[str, str], options: Mapping[str, Any]) -> str:
        """The model's variables and the options, as make assignments."""
        values: dict[str, Any] = dict(model_vars)
        values["CRT_POOL_LOG2"] = int(options["memory_pool_log2"])
        values["V"] = 1 if options["verbose"] else 0
        workspace = options.get("workspace_size_bytes")
        values["CRT_CONFIG_FLAGS"] = (
            f"-DTVM_CRT_WORKSPACE_BYTES={int(workspace)}UL" if workspace else ""
        )
        text = _mk_lines(values)
        if options.get("cc"):
            text += f"CC := {options['cc']}\n"
        return text

    def build(self, project_dir: Path, options: Mapping[str, Any]) -> None:
        """Run the project's Makefile."""
        run_make(project_dir, [], float(options["build_timeout"]), f"project {project_dir}")

    def flash(self, project_dir: Path, options: Mapping[str, Any]) -> FlashedDevice:
        """The built image, ready for a transport."""
        binary = project_dir / "build" / "device"
        if not binary.is_file():
            raise TVMValueError(f"{binary} does not exist: call project.build() before flash()")
        return _HostDevice(binary)
