"""``Target``: what a kernel is compiled for, parsed from TVM's target strings.

``"c"`` and ``"llvm"`` both mean the host CPU; options follow TVM's spelling: ``-mcpu=native``
(or a CPU name), ``-mtriple=...``, ``-mattr=+avx2,...``, ``--system-lib``/``-system-lib`` (emit
a C runtime function registry), ``-keys=...``. The host's SIMD width and core count, which
schedules use to pick vector lanes and tiles, are read from the C compiler's ``-march=native``
macros, else ``/proc/cpuinfo`` (so they follow the machine, never one machine).

``-backend=`` says how the kernels are compiled: ``c`` (generated C and the system C compiler)
or ``llvmlite`` (LLVM IR compiled in this process: no C compiler needed). ``"c"`` always uses
C, and so do system libraries and cross targets. Plain ``"llvm"`` uses llvmlite, chosen by
``bench/kernels.py``, which builds every kernel both ways in one run. On an AMD Zen 5 host
(AVX-512, one core), over three runs, llvmlite's kernels ran 1.15-3.2x faster than gcc 12's
``-O3 -march=native`` build of the same schedules (the quietest run: matmul 1024^3 174 against
101 GFLOP/s, 128x768x768 177 against 112, ResNet-18 3x3 conv 113 against 92, MobileNet
depthwise 45 against 14) and compiled in about half the time (0.14-0.27 s against
0.31-0.42 s; a small kernel about three times faster: no compiler process to start).
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ..ffi.errors import TVMValueError
from .cpu_features import apply_mattr, cpu_features, generic_cpu
from .cross import arm_fpu, arm_has_dsp, cpu_arch, float_abi, host_arch, is_bare_metal

__all__ = ["DEFAULT_LLVM_BACKEND", "GPU_KINDS", "Target", "TargetKind", "cuda", "host_simd_bits"]

_KINDS = ("c", "llvm")
#: GPU kinds a target may name (TVM code constructs them, checks ``kind.name``, keys and
#: device facts); pytvm has no code generator for them, so building for one raises.
GPU_KINDS = ("cuda", "rocm", "opencl", "vulkan", "metal")
_GPU_OPTIONS = ("arch", "max_num_threads", "thread_warp_size", "max_shared_memory_per_block")
_FLAGS = ("system-lib",)
_OPTIONS = (
    "mcpu", "mtriple", "mattr", "keys", "mabi", "mfloat-abi", "mfpu", "model", "opt-level",
    "backend", "device",
)  # fmt: skip
_BACKENDS = ("c", "llvmlite")
#: The backend of ``"llvm"`` when the target names none (see the module docstring for why).
DEFAULT_LLVM_BACKEND = "llvmlite"
_BITS_OF_TYPE = re.compile(r"^(?:u?int|float|bfloat)(\d+)$")
#: Vector width of a CPU without a SIMD unit (its word).
_SCALAR_BITS = 32
#: Registers a one-lane CPU's register tile gets (see ``Target.num_registers``).
_SCALAR_REGISTERS = 8


@dataclass(frozen=True, slots=True)
class TargetKind:
    """The kind of a target (``c`` or ``llvm``); TVM code reads ``target.kind.name``."""

    name: str


@dataclass(frozen=True, slots=True, eq=False)
class Target:
    """A compilation target.

    Examples
    --------
    >>> from pytvm.target import Target
    >>> t = Target("c -mcpu=native --system-lib")
    >>> t.kind.name, t.system_lib, t.mcpu
    ('c', True, 'native')
    >>> str(Target("llvm"))
    'llvm'
    """

    text: str
    kind: TargetKind = field(init=False)
    attrs: Mapping[str, Any] = field(init=False)
    host: Target | None = field(init=False)

    def __init__(
        self,
        target: str | Mapping[str, Any] | Target,
        host: str | Mapping[str, Any] | Target | None = None,
    ) -> None:
        own_host: Target | None = None
        if isinstance(target, Target):
            own_host = target.host
            target = target.text
        if isinstance(target, Mapping):
            if "host" in target:
                own_host = Target(target["host"])
            target = _from_dict({k: v for k, v in target.items() if k != "host"})
        if not isinstance(target, str):
            raise TVMValueError(f"Target expects a string or a dict, got {type(target).__name__}")
        kind, attrs = _parse(target)
        if host is not None:
            own_host = host if isinstance(host, Target) else Target(host)
        if own_host is not None and own_host.host is not None:
            raise TVMValueError(
                f"Target {target!r}: its host {own_host!r} has a host of its own; a host target "
                "runs the kernels' launch code and cannot have another host"
            )
        object.__setattr__(self, "text", _canonical(kind, attrs))
        object.__setattr__(self, "kind", TargetKind(kind))
        object.__setattr__(self, "attrs", MappingProxyType(attrs))
        object.__setattr__(self, "host", own_host)

    def with_host(self, host: str | Mapping[str, Any] | Target | None = None) -> Target:
        """A copy of this target with ``host`` as its host (TVM's ``Target.with_host``)."""
        return Target(self.text, host)

    @staticmethod
    def canon_target_and_host(
        target: Any, target_host: Any = None
    ) -> tuple[Target | None, Target | None]:
        """TVM's helper: ``(target, host)`` as Targets, ``target_host`` becoming its host."""
        if target is None:
            return None, None if target_host is None else Target(target_host)
        tgt = Target(target, target_host) if target_host is not None else Target(target)
        return tgt, tgt.host

    # ------------------------------------------------------------------ options

    @property
    def mcpu(self) -> str:
        """The CPU (``"native"`` for the host; ``""`` when not given)."""
        return str(self.attrs.get("mcpu", ""))

    @property
    def mtriple(self) -> str:
        """The target triple for cross compilation (``""`` for the host)."""
        return str(self.attrs.get("mtriple", ""))

    @property
    def system_lib(self) -> bool:
        """Whether to emit a system library (a function registry for the C runtime)."""
        return bool(self.attrs.get("system-lib", False))

    @property
    def keys(self) -> tuple[str, ...]:
        """Keys that pick schedules: ``("cpu",)`` for CPU targets, ``(kind, "gpu")`` for GPUs,
        with ``-device=``'s name first (``llvm -device=arm_cpu``: ``("arm_cpu", "cpu")``).
        """
        default = f"{self.kind.name},gpu" if self.kind.name in GPU_KINDS else "cpu"
        device = self.attrs.get("device")
        if device and device not in default.split(","):
            default = f"{device},{default}"
        return tuple(str(self.attrs.get("keys", default)).split(","))

    @property
    def backend(self) -> str:
        """How kernels are compiled: ``"c"`` (generated C, the system C compiler) or
        ``"llvmlite"`` (LLVM IR compiled in this process). ``"c"`` targets, system libraries
        and cross targets always use C; ``"llvm"`` uses :data:`DEFAULT_LLVM_BACKEND` unless
        ``-backend=`` names one.
        """
        self.check_buildable()
        explicit = self.attrs.get("backend")
        if explicit:
            return str(explicit)
        if self.kind.name == "c" or self.system_lib or not self.is_host:
            return "c"
        return DEFAULT_LLVM_BACKEND

    def check_buildable(self) -> None:
        """Raise ``TVMValueError`` when pytvm has no code generator for this target (a GPU)."""
        if self.kind.name in GPU_KINDS:
            raise TVMValueError(
                f"target '{self}': pytvm generates code for CPUs only ('llvm', 'c'); there is no "
                f"{self.kind.name} code generator: build for 'llvm' and run on pytvm.cpu()"
            )

    @property
    def is_host(self) -> bool:
        """Whether code for this target runs on this machine: a CPU kind whose architecture
        (:attr:`arch`) is this machine's and that does not run bare metal (a foreign
        ``-mtriple`` such as ``thumbv7em-none-eabihf``, or a ``-mcpu`` such as ``cortex-m4``
        or ``cortex-a72`` on an x86 machine, is not). A build for a target that is not the
        host returns C source (``pytvm.runtime.source_module.SourceModule``), never loads.
        """
        if self.kind.name in GPU_KINDS:
            return False
        return self.arch == host_arch() and not self.bare_metal

    # ------------------------------------------------------------------ facts for cross CPUs

    @property
    def arch(self) -> str:
        """The CPU architecture (``x86_64``, ``aarch64``, ``arm``, ``riscv32``, ``riscv64``):
        the triple's, else ``-mcpu``'s (``cortex-m4``: ``arm``), else this machine's.
        """
        return cpu_arch(self.mcpu, self.mtriple)

    @property
    def bare_metal(self) -> bool:
        """Whether the code runs with no operating system, against the C runtime (CRT): a
        Cortex-M/R CPU or a ``-none``/``-elf`` triple. Such a target has one core.
        """
        return is_bare_metal(self.mcpu, self.mtriple)

    @property
    def float_abi(self) -> str:
        """The Arm float ABI (``hard``, ``softfp``, ``soft``; ``""`` off Arm): ``-mfloat-abi=``,
        else the triple's (``eabihf``: hard), else ``hard`` for a CPU with an FPU.
        """
        return float_abi(self.mcpu, self.mtriple, str(self.attrs.get("mfloat-abi", "")))

    @property
    def fpu(self) -> str:
        """GCC's ``-mfpu`` name of the FPU the code uses (``fpv4-sp-d16`` on a Cortex-M4F);
        ``""`` with no FPU or a soft float ABI. ``-mfpu=`` overrides it.
        """
        if self.float_abi == "soft":
            return ""
        return str(self.attrs.get("mfpu", "")) or arm_fpu(self.mcpu)

    @property
    def has_hard_float(self) -> bool:
        """Whether float arithmetic runs on an FPU (off Arm: True for a host CPU)."""
        if self.arch != "arm":
            return self.is_host or not self.bare_metal
        return bool(self.fpu)

    @property
    def has_dsp(self) -> bool:
        """Whether the CPU has the Arm DSP extension (Cortex-M4/M7/M33...: packed 8/16-bit
        multiply-accumulate in a 32-bit register).
        """
        return arm_has_dsp(self.mcpu) or "dsp" in str(self.attrs.get("mattr", ""))

    @property
    def cflags(self) -> list[str]:
        """C compiler flags that make code for this target (empty for the host, whose flags
        the driver picks): ``-mcpu``, ``-mthumb`` for Arm M/R profiles, ``-mfloat-abi``,
        ``-mfpu``, ``-ffp-contract=fast`` (a multiply and an add become one fused
        multiply-add where the CPU has one, as the host's GNU C mode and TVM's LLVM code
        generator do; ``-std=c99`` alone turns it off), and ``-DPYTVM_CRT=1`` on bare metal
        (the code links against the CRT).

        Examples
        --------
        >>> Target("c -mcpu=cortex-m4").cflags  # doctest: +NORMALIZE_WHITESPACE
        ['-mcpu=cortex-m4', '-mthumb', '-mfloat-abi=hard', '-mfpu=fpv4-sp-d16',
         '-ffp-contract=fast', '-DPYTVM_CRT=1']
        """
        if self.is_host:
            return []
        flags = [f"-mcpu={self.mcpu}"] if self.mcpu and self.mcpu != "native" else []
        if self.arch == "arm":
            if self.mcpu.startswith(("cortex-m", "cortex-r")) or self.mtriple.startswith("thumb"):
                flags.append("-mthumb")
            flags.append(f"-mfloat-abi={self.float_abi}")
            if self.fpu:
                flags.append(f"-mfpu={self.fpu}")
        flags.append("-ffp-contract=fast")
        if self.bare_metal:
            flags.append("-DPYTVM_CRT=1")
        return flags

    # ------------------------------------------------------------------ facts for schedules

    @property
    def features(self) -> frozenset[str]:
        """The CPU's instruction-set features by LLVM's names (``avx2``, ``avx512f``, ``fma``):
        those of ``-mcpu`` edited by ``-mattr``. A host target without ``-mcpu`` is this
        machine, unless it gives ``-mattr``: then, as in LLVM, the features are the generic
        CPU's plus those (``"llvm -mattr=+avx2"`` is an AVX2 machine, whatever this one has).
        Empty for GPU kinds and for CPUs the C compiler does not know.
        """
        if self.kind.name in GPU_KINDS:
            return frozenset()
        mcpu, mattr = self.mcpu, str(self.attrs.get("mattr", ""))
        if mcpu == "native" or (mcpu == "" and not mattr):
            base = cpu_features("native") if self.is_host else frozenset()
        elif mcpu == "":
            base = cpu_features(generic_cpu()) if self.is_host else frozenset()
        elif self.arch != host_arch():  # the host's C compiler knows no foreign CPU
            base = frozenset()
        else:
            base = cpu_features(mcpu)
        return apply_mattr(base, mattr)

    @property
    def vector_width_bits(self) -> int:
        """SIMD register width: 512 (AVX-512F), 256 (AVX2/AVX), 128 (SSE2, NEON), from
        :attr:`features`; 32 (no vectors) for a CPU with none of them.
        """
        features = self.features
        if "avx512f" in features:
            return 512
        if "avx2" in features or "avx" in features:
            return 256
        if "sse2" in features or "neon" in features:
            return 128
        return 128 if "cortex-a" in self.mcpu or "aarch64" in self.mtriple else 32

    def vector_lanes(self, dtype: str) -> int:
        """How many ``dtype`` elements one SIMD register holds: 1 on a CPU without a SIMD unit
        (a Cortex-M: schedules emit scalar code, no vector types, whatever the dtype).
        """
        width = self.vector_width_bits
        if width <= _SCALAR_BITS:
            return 1
        match = _BITS_OF_TYPE.match(dtype)
        bits = int(match.group(1)) if match else 32
        return max(1, width // bits)

    @property
    def num_registers(self) -> int:
        """Registers a schedule's register tile may keep values in: the SIMD registers (32 with
        512-bit vectors, else 16) or, on a CPU without vectors, the scalar registers an inner
        loop gets for accumulators and operands (8 on a Cortex-M: 4 accumulators, modest
        unrolling).
        """
        width = self.vector_width_bits
        if width <= _SCALAR_BITS:
            return _SCALAR_REGISTERS
        return 32 if width >= 512 else 16  # noqa: PLR2004

    @property
    def num_cores(self) -> int:
        """Cores a parallel loop may use (the process's CPU affinity on the host)."""
        if not self.is_host:
            return 1
        return (
            len(os.sched_getaffinity(0))
            if hasattr(os, "sched_getaffinity")
            else (os.cpu_count() or 1)
        )

    # ------------------------------------------------------------------ context

    @staticmethod
    def current(allow_none: bool = True) -> Target | None:
        """The target of the innermost ``with target:`` block, or None."""
        if _STACK:
            return _STACK[-1]
        if not allow_none:
            raise TVMValueError("no target is active: use `with pytvm.target.Target(...):`")
        return None

    def __enter__(self) -> Target:
        _STACK.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        _STACK.pop()

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        if self.host is None:
            return f"Target({self.text!r})"
        return f"Target({self.text!r}, host={self.host.text!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Target) and (other.text, other.host) == (self.text, self.host)

    def __hash__(self) -> int:
        return hash((self.text, self.host))

    def __reduce__(self) -> tuple[type[Target], tuple[str, Target | None]]:
        """Pickles and copies as its text and host (its attributes are rebuilt from them)."""
        return (Target, (self.text, self.host))


_STACK: list[Target] = []


def cuda(model: str = "unknown", arch: str | None = None, options: Any = None) -> Target:
    """TVM's ``tvm.target.cuda()``: a CUDA target (``-arch=sm_80``, ...); pytvm can describe it
    but has no CUDA code generator, so a build for it raises.
    """
    parts = ["cuda", f"-model={model}"]
    if arch:
        parts.append(f"-arch={arch}")
    if options:
        parts.extend([options] if isinstance(options, str) else list(options))
    return Target(" ".join(parts))


#: TVM's microcontroller models (``tvm.target.target.micro``) and the options each implies.
MICRO_SUPPORTED_MODELS: dict[str, list[str]] = {
    "host": [],
    "atsamd51": ["-mcpu=cortex-m4"],
    "cxd5602gg": ["-mcpu=cortex-m4"],
    "esp32": [],
    "imxrt10xx": ["-mcpu=cortex-m7"],
    "mps2_an521": ["-mcpu=cortex-m33"],
    "mps3_an547": ["-mcpu=cortex-m55"],
    "nrf52840": ["-mcpu=cortex-m4", "-mattr=-dsp"],
    "nrf5340dk": ["-mcpu=cortex-m33"],
    "rp2040": ["-mcpu=cortex-m0"],
    "sam3x8e": ["-mcpu=cortex-m3"],
    "stm32f746xx": ["-mcpu=cortex-m7", "-march=armv7e-m"],
    "stm32h7xx": ["-mcpu=cortex-m7"],
    "stm32l4r5zi": ["-mcpu=cortex-m4"],
    "stm32u5xx": ["-mcpu=cortex-m33"],
}


def micro(model: str = "unknown", options: str | Sequence[str] | None = None) -> Target:
    """TVM's ``tvm.target.target.micro(model)``: the C target of a microcontroller model
    (``micro("host")`` is ``c -model=host``; ``micro("stm32l4r5zi")`` adds
    ``-mcpu=cortex-m4``). ``model`` is a key of :data:`MICRO_SUPPORTED_MODELS`.
    """
    if model not in MICRO_SUPPORTED_MODELS:
        raise ValueError(
            f"target.micro: model {model!r} is not one of {sorted(MICRO_SUPPORTED_MODELS)}"
        )
    parts = ["c", *MICRO_SUPPORTED_MODELS[model], f"-model={model}"]
    if options:
        parts.extend([options] if isinstance(options, str) else list(options))
    return Target(" ".join(parts))


def _from_dict(config: Mapping[str, Any]) -> str:
    kind = config.get("kind")
    if not isinstance(kind, str):
        raise TVMValueError(f"Target dict needs a 'kind' string, got {dict(config)!r}")
    parts = [kind]
    for key, value in config.items():
        if key == "kind":
            continue
        if value is True:
            parts.append(f"--{key}")
        elif value not in (False, None):
            parts.append(f"-{key}={','.join(value) if isinstance(value, list) else value}")
    return " ".join(parts)


def _parse(text: str) -> tuple[str, dict[str, Any]]:
    words = shlex.split(text)
    if not words:
        raise TVMValueError("empty target string; expected e.g. 'c', 'llvm -mcpu=native'")
    kind = words[0]
    if kind not in (*_KINDS, *GPU_KINDS):
        raise TVMValueError(
            f"unknown target kind {kind!r} in {text!r}; pytvm compiles for {', '.join(_KINDS)} "
            "(both build for the CPU through the C compiler)"
        )
    attrs: dict[str, Any] = {}
    for word in words[1:]:
        name, eq, value = word.lstrip("-").partition("=")
        if not word.startswith("-") or not name:
            raise TVMValueError(
                f"target {text!r}: cannot read {word!r}; options look like -key=value"
            )
        if name in _FLAGS and not eq:
            attrs[name] = True
        elif (name in _OPTIONS or (kind in GPU_KINDS and name in _GPU_OPTIONS)) and eq and value:
            attrs[name] = value
        else:
            known = ", ".join([*(f"--{f}" for f in _FLAGS), *(f"-{o}=..." for o in _OPTIONS)])
            raise TVMValueError(f"target {text!r}: unknown option {word!r}; known options: {known}")
    backend = attrs.get("backend")
    if backend is not None and backend not in _BACKENDS:
        raise TVMValueError(
            f"target {text!r}: unknown backend {backend!r}; expected one of {', '.join(_BACKENDS)}"
        )
    if backend == "llvmlite" and kind == "c":
        raise TVMValueError(
            f"target {text!r}: kind 'c' always builds through the C compiler; write "
            "'llvm -backend=llvmlite' to compile with LLVM in process"
        )
    if backend == "llvmlite" and (attrs.get("system-lib") or attrs.get("mtriple")):
        raise TVMValueError(
            f"target {text!r}: the llvmlite backend builds for this host only; system "
            "libraries and cross targets build through C (-backend=c)"
        )
    return kind, attrs


def _canonical(kind: str, attrs: Mapping[str, Any]) -> str:
    parts = [kind]
    for name in sorted(attrs):
        value = attrs[name]
        parts.append(f"--{name}" if value is True else f"-{name}={value}")
    return " ".join(parts)


def host_simd_bits() -> int:
    """The host's SIMD width in bits, from the C compiler's ``-march=native`` macros."""
    return Target("c").vector_width_bits
