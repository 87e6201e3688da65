"""TVM v0.18's ``tvm.micro``: models on microcontrollers.

Model Library Format export, memory reports against a board's memory map, project templates
that build, flash and connect a board (``host``: a process over pipes; ``qemu-cortex-m4``: an
emulated MPS2-AN386 board over its UART), and ``Session`` over a board's transport.
"""

from __future__ import annotations

__all__: list[str] = []
