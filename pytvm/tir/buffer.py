"""Declaring buffers: typed, shaped views of memory that loads and stores go through."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..ffi.errors import TVMValueError
from .expr import Buffer, ExprLike, PrimExpr, Var, const, convert

__all__ = ["Buffer", "decl_buffer"]

#: The alignment, in bytes, a buffer gets when none is asked for (TVM's kAllocAlignment).
DEFAULT_ALIGNMENT = 64

_BUFFER_TYPES = ("", "default", "auto_broadcast")


def decl_buffer(
    shape: ExprLike | Sequence[ExprLike],
    dtype: str | None = None,
    name: str = "buffer",
    data: Var | None = None,
    strides: Sequence[ExprLike] | None = None,
    elem_offset: ExprLike | None = None,
    scope: str = "",
    data_alignment: int = -1,
    offset_factor: int = 0,
    buffer_type: str = "",
    axis_separators: Sequence[int] | None = None,
    span: Any = None,
) -> Buffer:
    """Declare a buffer (TVM's ``tir.decl_buffer``).

    ``dtype`` defaults to ``float32``, ``scope`` to ``"global"`` and ``data_alignment`` (-1) to
    64 bytes. Without ``elem_offset``, the offset is 0, or a fresh variable
    ``<name>_elem_offset`` when ``offset_factor`` is not 0 (the buffer may then start at any
    multiple of ``offset_factor`` elements).

    Examples
    --------
    >>> from pytvm import tir
    >>> buf = tir.decl_buffer((4, 8), "float32", name="A", offset_factor=16)
    >>> buf.elem_offset.name, buf.offset_factor, buf.scope, buf.data_alignment
    ('A_elem_offset', 16, 'global', 64)
    """
    dims = tuple(shape) if isinstance(shape, (list, tuple)) else (shape,)
    shape_exprs = tuple(convert(s) for s in dims)
    if buffer_type not in _BUFFER_TYPES:
        raise TVMValueError(
            f"decl_buffer {name}: unknown buffer_type {buffer_type!r}; expected one of "
            f"{_BUFFER_TYPES}"
        )
    if axis_separators:
        raise TVMValueError(
            f"decl_buffer {name}: axis_separators {list(axis_separators)} are not supported "
            "(pytvm flattens every buffer to one dimension)"
        )
    if offset_factor < 0:
        raise TVMValueError(f"decl_buffer {name}: offset_factor must be >= 0, got {offset_factor}")
    index_dtype = shape_exprs[0].dtype if shape_exprs else "int32"
    offset: PrimExpr
    if elem_offset is not None:
        offset = convert(elem_offset)
    elif offset_factor:
        offset = Var(f"{name}_elem_offset", index_dtype)
    else:
        offset = const(0, index_dtype)
    return Buffer(
        data if data is not None else Var(name, "handle"),
        dtype or "float32",
        shape_exprs,
        name,
        tuple(convert(s) for s in strides or ()),
        offset,
        scope or "global",
        DEFAULT_ALIGNMENT if data_alignment <= 0 else data_alignment,
        offset_factor,
        "" if buffer_type == "default" else buffer_type,
    )
