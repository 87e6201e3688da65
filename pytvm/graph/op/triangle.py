"""``trilu``: the upper or lower triangle of the last two axes (Relay's operator), with the
diagonal offset ``k`` a 0-d integer tensor, so it may be computed at run time.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...ffi.errors import TVMValueError
from ...topi.masking import trilu
from ..attrs import Attrs
from .define import define_op
from .registry import OpPattern

__all__: list[str] = []


def _trilu(args: Sequence[Any], attrs: Attrs, ty: object) -> Any:
    data, k = args
    if k.ndim != 0 or not str(k.dtype).startswith(("int", "uint")):
        raise TVMValueError(
            f"trilu: k must be a 0-d integer tensor, got {k.dtype} of rank {k.ndim}"
        )
    return trilu(data, k(), bool(attrs.get("upper", True)))


def _trilu_np(args: Sequence[np.ndarray], attrs: Attrs) -> np.ndarray:
    data, k = args
    keep = np.triu if attrs.get("upper", True) else np.tril
    return keep(data, int(k)).astype(data.dtype)


define_op("trilu", 2, OpPattern.INJECTIVE, _trilu, _trilu_np)
