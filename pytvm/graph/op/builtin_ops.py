"""Imports every module that registers graph operators."""

from __future__ import annotations

from . import (
    activation,
    elemwise,
    image,
    indexing,
    layout,
    nn,
    normalization,
    pooling,
    reduce,
    transform,
)

__all__ = [
    "activation",
    "elemwise",
    "image",
    "indexing",
    "layout",
    "nn",
    "normalization",
    "pooling",
    "reduce",
    "transform",
]
