"""``dft``: the (inverse) discrete Fourier transform along the last axis of a complex tensor
given as real and imaginary parts (Relay's operator and attribute ``inverse``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...topi.signal import dft
from ..attrs import Attrs
from .define import define_op
from .registry import OpPattern

__all__: list[str] = []


def _dft_np(args: Sequence[np.ndarray], attrs: Attrs) -> tuple[np.ndarray, np.ndarray]:
    re, im = args
    x = re.astype(np.float64) + 1j * im.astype(np.float64)
    y = np.fft.ifft(x, axis=-1) if attrs.get("inverse", False) else np.fft.fft(x, axis=-1)
    return y.real.astype(re.dtype), y.imag.astype(re.dtype)


def _dft(args: Sequence[Any], attrs: Attrs, ty: object) -> Any:
    return dft(args[0], args[1], bool(attrs.get("inverse", False)))


define_op("dft", 2, OpPattern.OPAQUE, _dft, _dft_np)
