"""TVM's ``tvm.contrib.nvcc`` capability checks on CUDA compute versions (``"7.5"``).

pytvm has no CUDA code generator, so there is nothing to compile here (:func:`compile_cuda`
raises); the checks answer from the compute version alone, as TVM's do, so tests that ask
``have_fp16(dev.compute_version)`` before using a GPU keep working.

Examples
--------
>>> from pytvm.contrib import nvcc
>>> nvcc.parse_compute_version("8.6"), nvcc.have_fp16("5.3"), nvcc.have_int8("5.2")
((8, 6), True, False)
>>> nvcc.have_tensorcore("7.0"), nvcc.have_bf16("7.5")
(True, False)
"""

from __future__ import annotations

from typing import Any, NoReturn

from ..ffi.errors import TVMError

_FP16_MAJOR = 6  # and compute 5.3
_INT8_MAJOR = 6
_TENSORCORE_MAJOR = 7
_BF16_MAJOR = 8

__all__ = [
    "compile_cuda",
    "have_bf16",
    "have_fp16",
    "have_int8",
    "have_tensorcore",
    "parse_compute_version",
]


def parse_compute_version(compute_version: str) -> tuple[int, int]:
    """``(major, minor)`` of a compute version such as ``"7.5"``; ``RuntimeError`` otherwise."""
    parts = str(compute_version).split(".")
    try:
        return int(parts[0]), int(parts[1])
    except (IndexError, ValueError) as err:
        raise RuntimeError(f"Compute version parsing error: {compute_version!r}") from err


def have_fp16(compute_version: str) -> bool:
    """Whether the GPU computes in float16: compute 5.3, or 6.0 and later."""
    major, minor = parse_compute_version(compute_version)
    return (major, minor) == (5, 3) or major >= _FP16_MAJOR


def have_int8(compute_version: str) -> bool:
    """Whether the GPU has int8 dot products: compute 6.1 ... (major 6 and later)."""
    return parse_compute_version(compute_version)[0] >= _INT8_MAJOR


def have_bf16(compute_version: str) -> bool:
    """Whether the GPU computes in bfloat16: compute 8.0 and later."""
    return parse_compute_version(compute_version)[0] >= _BF16_MAJOR


def have_tensorcore(compute_version: str | None = None, target: Any = None) -> bool:
    """Whether the GPU has Tensor Cores (compute 7.0 and later). Without a compute version the
    target's ``arch`` (``sm_75``) is used; with neither, there is no GPU here: ``False``.
    """
    if compute_version is None:
        arch = getattr(target, "attrs", {}).get("arch") if target is not None else None
        if not arch:
            return False
        digits = str(arch).split("_")[-1]
        compute_version = f"{digits[:-1]}.{digits[-1]}"
    return parse_compute_version(compute_version)[0] >= _TENSORCORE_MAJOR


def compile_cuda(code: str, target_format: str = "ptx", **kwargs: Any) -> NoReturn:
    """TVM compiles CUDA source with nvcc here; pytvm has no CUDA code generator."""
    del code, kwargs
    raise TVMError(f"nvcc.compile_cuda({target_format}): pytvm has no CUDA code generator")
