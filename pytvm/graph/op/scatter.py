"""Scatter operators: ``scatter_elements`` and ``scatter_nd`` (Relay's names and attributes),
``data`` with ``updates`` written or combined (``add``, ``mul``, ``min``, ``max``) at the
positions ``indices`` name; repeated positions combine in order (the last update wins).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...topi.scatter import scatter_elements, scatter_nd
from ..attrs import Attrs
from .define import define_op
from .registry import OpPattern

__all__: list[str] = []

_COMBINE: dict[str, Any] = {
    "add": np.add,
    "mul": np.multiply,
    "min": np.minimum,
    "max": np.maximum,
}


def _put(out: np.ndarray, where: tuple[Any, ...], value: Any, mode: str) -> None:
    if mode == "update":
        out[where] = value
    else:
        out[where] = _COMBINE[mode](out[where], value)


def _scatter_elements_np(args: Sequence[np.ndarray], attrs: Attrs) -> np.ndarray:
    data, indices, updates = args
    axis = int(attrs.get("axis", 0)) % data.ndim
    mode = str(attrs.get("reduction", "update"))
    out = data.copy()
    n = data.shape[axis]
    for pos in np.ndindex(*indices.shape):
        target = int(indices[pos])
        target = target + n if target < 0 else target
        where = (*pos[:axis], target, *pos[axis + 1 :])
        _put(out, where, updates[pos], mode)
    return out


define_op(
    "scatter_elements",
    3,
    OpPattern.OPAQUE,
    lambda args, attrs, ty: scatter_elements(
        args[0],
        args[1],
        args[2],
        int(attrs.get("axis", 0)),
        str(attrs.get("reduction", "update")),
    ),
    _scatter_elements_np,
)


def _scatter_nd_np(args: Sequence[np.ndarray], attrs: Attrs) -> np.ndarray:
    data, indices, updates = args
    mode = str(attrs.get("mode", "update"))
    out = data.copy()
    m = indices.shape[0]
    for pos in np.ndindex(*indices.shape[1:]):
        where = tuple(int(indices[(k, *pos)]) % data.shape[k] for k in range(m))
        _put(out, where, updates[pos], mode)
    return out


define_op(
    "scatter_nd",
    3,
    OpPattern.OPAQUE,
    lambda args, attrs, ty: scatter_nd(args[0], args[1], args[2], str(attrs.get("mode", "update"))),
    _scatter_nd_np,
)
