"""The instruction-set features of a CPU, as the C compiler knows them.

``cpu_features("znver3")`` asks ``cc -march=znver3`` which feature macros it defines
(``__AVX2__``, ``__FMA__`` ...); ``cpu_features("native")`` does the same for this machine
(falling back to ``/proc/cpuinfo`` when no C compiler answers). Names are LLVM's feature names
(``avx512f``, ``avx2``, ``fma``, ``avx512vnni`` ...), so a target's ``-mattr=+avx2,-avx512f`` edits
them directly. A CPU the compiler does not know has no features (an empty set).

Examples
--------
>>> "avx2" in cpu_features("haswell") and "avx512f" not in cpu_features("haswell")
True
"""

from __future__ import annotations

import os
import platform
import re
import subprocess
from functools import cache

__all__ = ["apply_mattr", "cpu_features", "generic_cpu"]

#: C compiler macro -> LLVM feature name.
_MACROS = {
    "__SSE2__": "sse2",
    "__SSE4_1__": "sse4.1",
    "__SSE4_2__": "sse4.2",
    "__AVX__": "avx",
    "__AVX2__": "avx2",
    "__FMA__": "fma",
    "__F16C__": "f16c",
    "__AVX512F__": "avx512f",
    "__AVX512BW__": "avx512bw",
    "__AVX512DQ__": "avx512dq",
    "__AVX512VL__": "avx512vl",
    "__AVX512VNNI__": "avx512vnni",
    "__AVX512BF16__": "avx512bf16",
    "__AVX512FP16__": "avx512fp16",
    "__AVXVNNI__": "avxvnni",
    "__ARM_NEON": "neon",
    "__ARM_FEATURE_DOTPROD": "dotprod",
    "__ARM_FEATURE_DSP": "dsp",
    "__ARM_FP": "fp",
}


_AVX2 = frozenset({"sse2", "sse4.1", "sse4.2", "avx", "avx2", "fma", "f16c"})
_AVX512 = _AVX2 | {"avx512f", "avx512bw", "avx512dq", "avx512vl", "avx512vnni"}
#: CPUs newer than some C compilers (GCC 12 knows no ``znver4``): their features, from the
#: vendors' documents. A compiler that knows the CPU is asked first.
_NEWER_CPUS = {
    "znver4": _AVX512 | {"avx512bf16"},
    "znver5": _AVX512 | {"avx512bf16", "avxvnni"},
    "sapphirerapids": _AVX512 | {"avx512bf16", "avx512fp16", "avxvnni"},
    "emeraldrapids": _AVX512 | {"avx512bf16", "avx512fp16", "avxvnni"},
    "graniterapids": _AVX512 | {"avx512bf16", "avx512fp16", "avxvnni"},
    "alderlake": _AVX2 | {"avxvnni"},
    "raptorlake": _AVX2 | {"avxvnni"},
    "meteorlake": _AVX2 | {"avxvnni"},
    "arrowlake": _AVX2 | {"avxvnni"},
}


@cache
def cpu_features(mcpu: str = "native") -> frozenset[str]:
    """The features of ``mcpu`` (``"native"``: this machine), by LLVM's names."""
    cc = os.environ.get("CC") or "cc"
    flag = "-march=native" if mcpu in ("", "native") else f"-march={mcpu}"
    try:
        out = subprocess.run(
            [cc, flag, "-dM", "-E", "-x", "c", os.devnull],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        out = ""
    if not out and mcpu in ("", "native"):
        return _cpuinfo_features()
    if not out:
        return _NEWER_CPUS.get(mcpu, frozenset())
    defined = {line.split()[1] for line in out.splitlines() if line.startswith("#define ")}
    return frozenset(name for macro, name in _MACROS.items() if macro in defined)


def generic_cpu() -> str:
    """The baseline CPU of this machine's architecture (``-march`` name): what LLVM assumes
    when a target names features but no CPU.
    """
    machine = platform.machine().lower()
    if machine in ("x86_64", "amd64"):
        return "x86-64"
    if machine in ("aarch64", "arm64"):
        return "armv8-a"
    return machine


def apply_mattr(features: frozenset[str], mattr: str) -> frozenset[str]:
    """``features`` edited by a target's ``-mattr`` list (``+avx2,-avx512f``).

    Examples
    --------
    >>> sorted(apply_mattr(frozenset({"avx2", "avx512f"}), "-avx512f,+fma"))
    ['avx2', 'fma']
    """
    out = set(features)
    for item in (m.strip() for m in mattr.split(",")):
        if item.startswith("+"):
            out.add(item[1:])
        elif item.startswith("-"):
            out.discard(item[1:])
    return frozenset(out)


def _cpuinfo_features() -> frozenset[str]:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:  # noqa: PTH123 - one read
            text = f.read()
    except OSError:
        return frozenset()
    flags = set(re.findall(r"\b(avx512f|avx512bw|avx512vl|avx512_vnni|avx2|avx|fma|sse2)\b", text))
    return frozenset(f.replace("avx512_vnni", "avx512vnni") for f in flags)
