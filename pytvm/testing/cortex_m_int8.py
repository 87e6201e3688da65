"""Test helpers for int8 models on a Cortex-M: ONNX Runtime's static QDQ quantization of a float
model with a seeded calibration set, and cross-compiling a source module's C with
``arm-none-eabi-gcc`` (its undefined symbols, its disassembly).
"""

from __future__ import annotations

import functools
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import onnx

__all__ = ["ARM_GCC", "arm_compile", "newlib_symbols", "quantize_qdq"]

#: The cross compiler (None where it is not installed).
ARM_GCC = shutil.which("arm-none-eabi-gcc")
_TIMEOUT = 120


def quantize_qdq(
    model: onnx.ModelProto,
    activation_type: str = "QUInt8",
    per_channel: bool = True,
    seed: int = 5,
    batches: int = 8,
) -> onnx.ModelProto:
    """``model`` quantized by ``onnxruntime.quantization.quantize_static`` in the QDQ format
    (int8 weights, ``activation_type`` ``"QUInt8"`` or ``"QInt8"`` activations, weights per
    output channel or per tensor), calibrated on ``batches`` standard normal inputs drawn from
    ``seed``.
    """
    from onnxruntime.quantization import (  # type: ignore[import-untyped]
        CalibrationDataReader,
        QuantFormat,
        QuantType,
        quantize_static,
    )

    inp = model.graph.input[0]
    shape = [d.dim_value for d in inp.type.tensor_type.shape.dim]
    rng = np.random.default_rng(seed)
    feeds = [{inp.name: rng.standard_normal(shape).astype("float32")} for _ in range(batches)]

    class _Reader(CalibrationDataReader):  # type: ignore[misc]
        def __init__(self) -> None:
            self.batches = iter(feeds)

        def get_next(self) -> dict[str, np.ndarray] | None:
            return next(self.batches, None)

    with tempfile.TemporaryDirectory() as tmp:
        source, target = Path(tmp) / "float.onnx", Path(tmp) / "int8.onnx"
        onnx.save(model, source)
        quantize_static(
            str(source),
            str(target),
            _Reader(),
            quant_format=QuantFormat.QDQ,
            activation_type=getattr(QuantType, activation_type),
            weight_type=QuantType.QInt8,
            per_channel=per_channel,
        )
        return onnx.load(str(target))


def _run(cmd: list[str]) -> str:
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=_TIMEOUT, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{done.stdout}{done.stderr}")
    return done.stdout


@functools.cache
def newlib_symbols(cflags: tuple[str, ...]) -> frozenset[str]:
    """Global symbols newlib's libc and libm and libgcc define for the multilib of ``cflags``."""
    assert ARM_GCC is not None
    flags = [f for f in cflags if not f.startswith("-D")]
    out: set[str] = set()
    for lib in ("libc.a", "libm.a", "libgcc.a"):
        path = _run([ARM_GCC, *flags, f"-print-file-name={lib}"]).strip()
        nm = _run(["arm-none-eabi-nm", "-g", "--defined-only", path])
        out |= {f[2] for f in (line.split() for line in nm.splitlines()) if len(f) == 3}  # noqa: PLR2004
    return frozenset(out)


def arm_compile(
    source: str, cflags: list[str], includes: list[str], work: Path
) -> tuple[set[str], str]:
    """``source`` compiled by ``arm-none-eabi-gcc`` with ``cflags`` (warnings are errors when
    the flags say so); its undefined symbols and its disassembly.
    """
    assert ARM_GCC is not None
    src, obj = work / "kernels.c", work / "kernels.o"
    src.write_text(source)
    _run([ARM_GCC, *cflags, *(f"-I{d}" for d in includes), "-c", str(src), "-o", str(obj)])
    nm = _run(["arm-none-eabi-nm", "-u", str(obj)])
    undefined = {line.split()[-1] for line in nm.splitlines() if line.strip()}
    return undefined, _run(["arm-none-eabi-objdump", "-d", str(obj)])
