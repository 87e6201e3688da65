"""Bitwise operators on integers: ``bitwise_and``, ``bitwise_or``, ``bitwise_xor`` (with
broadcasting), ``bitwise_not``, ``left_shift`` and ``right_shift`` (Relay's names).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ...topi import bitwise
from ..attrs import Attrs
from .define import define_op
from .registry import OpPattern

__all__: list[str] = []


def _binary_np(fn: Callable[..., Any]) -> Callable[[Sequence[np.ndarray], Attrs], Any]:
    def run(args: Sequence[np.ndarray], attrs: Attrs) -> np.ndarray:
        a, b = args
        return np.asarray(fn(a, b.astype(a.dtype)), dtype=a.dtype)

    return run


_BINARY: dict[str, tuple[Callable[..., Any], Callable[..., Any]]] = {
    "bitwise_and": (bitwise.bitwise_and, np.bitwise_and),
    "bitwise_or": (bitwise.bitwise_or, np.bitwise_or),
    "bitwise_xor": (bitwise.bitwise_xor, np.bitwise_xor),
    "left_shift": (bitwise.left_shift, np.left_shift),
    "right_shift": (bitwise.right_shift, np.right_shift),
}


def _define_binary(name: str, te_fn: Callable[..., Any], np_fn: Callable[..., Any]) -> None:
    define_op(
        name,
        2,
        OpPattern.BROADCAST,
        lambda args, attrs, ty: te_fn(args[0], args[1]),
        _binary_np(np_fn),
    )


for _name, (_te, _np) in _BINARY.items():
    _define_binary(_name, _te, _np)

define_op(
    "bitwise_not",
    1,
    OpPattern.ELEMWISE,
    lambda args, attrs, ty: bitwise.bitwise_not(args[0]),
    lambda args, attrs: np.invert(args[0]),
)
