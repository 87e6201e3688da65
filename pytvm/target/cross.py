"""What a target's CPU is when it is not necessarily this machine: its architecture, float ABI,
FPU, DSP extension and whether it runs bare metal, read from ``-mtriple`` and ``-mcpu``.

The architecture comes from the triple's first part (``thumbv7em-none-eabihf``: ``arm``;
``aarch64-linux-gnu``: ``aarch64``; ``riscv32-unknown-elf``: ``riscv32``), else from the CPU
name (``cortex-m4``: ``arm``; ``cortex-a72``: ``aarch64``; ``sifive-e31``: ``riscv32``), else it
is this machine's. A Cortex-M (or Cortex-R) CPU, or a triple whose system is ``none``/``elf``/
``eabi``, runs bare metal: one core, no operating system, the C runtime (CRT).

Examples
--------
>>> cpu_arch("cortex-m4", "")
'arm'
>>> arm_fpu("cortex-m4"), arm_has_dsp("cortex-m4"), arm_has_dsp("cortex-m0")
('fpv4-sp-d16', True, False)
>>> float_abi("cortex-m4", "thumbv7em-none-eabihf", ""), float_abi("cortex-m3", "", "")
('hard', 'soft')
"""

from __future__ import annotations

import platform
import re

__all__ = [
    "arm_fpu",
    "arm_has_dsp",
    "cpu_arch",
    "float_abi",
    "host_arch",
    "is_bare_metal",
]

#: Cortex-M CPUs -> their single-precision FPU as GCC's ``-mfpu`` names it ("": none).
_CORTEX_M_FPU = {
    "cortex-m0": "",
    "cortex-m0plus": "",
    "cortex-m1": "",
    "cortex-m3": "",
    "cortex-m23": "",
    "cortex-m4": "fpv4-sp-d16",
    "cortex-m7": "fpv5-d16",
    "cortex-m33": "fpv5-sp-d16",
    "cortex-m35p": "fpv5-sp-d16",
    "cortex-m55": "auto",
    "cortex-m85": "auto",
}
#: Cortex-M CPUs with the DSP extension (``SMLAD``, ``SADD16``...: int8/int16 SIMD in a word).
_CORTEX_M_DSP = frozenset(
    {"cortex-m4", "cortex-m7", "cortex-m33", "cortex-m35p", "cortex-m55", "cortex-m85"}
)
#: 32-bit Cortex-A CPUs (the others are Armv8-A and above: aarch64 unless a triple says arm).
_CORTEX_A32 = frozenset(
    {"cortex-a5", "cortex-a7", "cortex-a8", "cortex-a9", "cortex-a12", "cortex-a15", "cortex-a17"}
)
_BARE_SYSTEMS = frozenset({"none", "elf", "eabi", "eabihf", "unknown-elf"})


def host_arch() -> str:
    """The architecture of this machine, by the names :func:`cpu_arch` uses (``x86_64``,
    ``aarch64``, ``arm``, ``riscv64``...).
    """
    return _normalise_arch(platform.machine().lower())


def _normalise_arch(name: str) -> str:
    if name in ("amd64", "x86_64", "x86-64", "x64"):
        return "x86_64"
    if re.fullmatch(r"i[3-6]86|x86", name):
        return "i386"
    if name in ("arm64", "aarch64", "aarch64_be") or (name.startswith("armv8") and "64" in name):
        return "aarch64"
    if name.startswith(("arm", "thumb")):
        return "arm"
    if name.startswith("riscv"):
        return "riscv64" if "64" in name else "riscv32"
    return name


def cpu_arch(mcpu: str, mtriple: str) -> str:  # noqa: PLR0911 - one answer per CPU family
    """The architecture of a target with CPU ``mcpu`` and triple ``mtriple`` (either may be
    ``""``): the triple's, else the CPU's, else this machine's.
    """
    if mtriple:
        return _normalise_arch(mtriple.split("-", 1)[0].lower())
    cpu = mcpu.lower()
    if cpu.startswith(("cortex-m", "cortex-r", "arm", "armv", "thumb")):
        return "arm"
    if cpu.startswith("cortex-a"):
        return "arm" if cpu in _CORTEX_A32 else "aarch64"
    if cpu.startswith(("neoverse", "apple-", "thunderx", "a64fx")):
        return "aarch64"
    if cpu.startswith(("sifive-e", "rocket-rv32", "generic-rv32")):
        return "riscv32"
    if cpu.startswith(("sifive-", "rocket", "generic-rv64", "riscv")):
        return "riscv64"
    return host_arch()


def is_bare_metal(mcpu: str, mtriple: str) -> bool:
    """Whether code for this CPU runs with no operating system: a Cortex-M or Cortex-R CPU, or
    a triple whose system is ``none``/``elf``/``eabi`` (``thumbv7em-none-eabihf``).
    """
    if mcpu.lower().startswith(("cortex-m", "cortex-r")):
        return True
    parts = mtriple.lower().split("-")[1:]
    return bool(parts) and (bool(_BARE_SYSTEMS.intersection(parts)) or parts[-1].endswith("elf"))


def arm_fpu(mcpu: str) -> str:
    """GCC's ``-mfpu`` name of the FPU a Cortex-M CPU has (``""``: none, or not a Cortex-M)."""
    return _CORTEX_M_FPU.get(mcpu.lower(), "")


def arm_has_dsp(mcpu: str) -> bool:
    """Whether ``mcpu`` is a Cortex-M with the DSP extension (Cortex-M4, M7, M33, ...)."""
    return mcpu.lower() in _CORTEX_M_DSP


def float_abi(mcpu: str, mtriple: str, explicit: str) -> str:
    """The Arm float ABI (``hard``, ``softfp``, ``soft``; ``""`` off Arm): ``-mfloat-abi=`` when
    given, else ``hard`` for an ``...eabihf`` triple, ``soft`` for an ``...eabi`` one, and with
    no triple ``hard`` for a CPU with an FPU (``c -mcpu=cortex-m4`` is a Cortex-M4F).
    """
    if explicit:
        return explicit
    if cpu_arch(mcpu, mtriple) != "arm":
        return ""
    if mtriple:
        return "hard" if mtriple.lower().endswith("hf") else "soft"
    return "hard" if arm_fpu(mcpu) else "soft"
