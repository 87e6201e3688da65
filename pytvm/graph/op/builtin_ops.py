"""Imports every module that registers graph operators."""

from __future__ import annotations

from . import (
    activation,
    bitwise,
    elemwise,
    grid,
    image,
    indexing,
    layout,
    loss,
    nn,
    normalization,
    pooling,
    qnn,
    recurrent,
    reduce,
    scatter,
    signal,
    sorting,
    transform,
    triangle,
    vision,
)

__all__ = [
    "activation",
    "bitwise",
    "elemwise",
    "grid",
    "image",
    "indexing",
    "layout",
    "loss",
    "nn",
    "normalization",
    "pooling",
    "qnn",
    "recurrent",
    "reduce",
    "scatter",
    "signal",
    "sorting",
    "transform",
    "triangle",
    "vision",
]
