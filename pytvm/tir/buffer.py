"""Declaring buffers: typed, shaped views of memory that loads and stores go through."""

from __future__ import annotations

from collections.abc import Sequence

from .expr import Buffer, ExprLike, Var, const, convert

__all__ = ["Buffer", "decl_buffer"]


def decl_buffer(
    shape: Sequence[ExprLike],
    dtype: str = "float32",
    name: str = "buffer",
    data: Var | None = None,
    strides: Sequence[ExprLike] = (),
    scope: str = "global",
    data_alignment: int = 64,
) -> Buffer:
    """Declare a buffer (TVM's ``tir.decl_buffer``)."""
    return Buffer(
        data if data is not None else Var(name, "handle"),
        dtype,
        tuple(convert(s) for s in shape),
        name,
        tuple(convert(s) for s in strides),
        const(0),
        scope,
        data_alignment,
    )
