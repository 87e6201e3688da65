"""Moving pixels between space and depth or batch: ``depth_to_space``, ``space_to_depth``,
``space_to_batch_nd``, ``batch_to_space_nd``; and ``dilate`` (values spread apart on each axis).
"""

from __future__ import annotations

from collections.abc import Sequence

from ...te.operation import compute
from ...te.tensor import Tensor
from ...tir.expr import ExprLike, PrimExpr, Var, const
from ...tir.op import all as _all
from ...tir.op import if_then_else
from .. import tag
from .._shape import const_int, op_error

__all__ = ["batch_to_space_nd", "depth_to_space", "dilate", "space_to_batch_nd", "space_to_depth"]

_LAYOUTS = ("NCHW", "NHWC")
_MODES = ("DCR", "CDR", "CRD")  # TVM names the sequential order CDR, ONNX CRD


def _nchw_axes(op: str, data: Tensor, layout: str) -> tuple[int, int, int]:
    """Positions of C, H and W."""
    if layout not in _LAYOUTS:
        raise op_error(op, "layout", layout, f"one of {_LAYOUTS}")
    if data.ndim != 4:  # noqa: PLR2004
        raise op_error(op, "input rank", data.ndim, "4")
    return (1, 2, 3) if layout == "NCHW" else (3, 1, 2)


def _dim(op: str, t: Tensor, axis: int) -> int:
    v = const_int(t.shape[axis])
    if v is None:
        raise op_error(op, f"extent of axis {axis}", str(t.shape[axis]), "a constant")
    return v


def depth_to_space(
    data: Tensor, block_size: int, layout: str = "NCHW", mode: str = "DCR"
) -> Tensor:
    """``[N, C, H, W]`` to ``[N, C / b², H * b, W * b]`` (or the NHWC forms): the channels
    become ``b x b`` blocks of pixels, read as ``(b, b, C / b²)`` (``"DCR"``, TensorFlow's) or
    ``(C / b², b, b)`` (``"CDR"``, also spelled ``"CRD"``: PyTorch's).

    Examples
    --------
    >>> from pytvm import te, topi
    >>> x = te.placeholder((1, 8, 2, 3), name="x")
    >>> [str(d) for d in topi.nn.depth_to_space(x, 2).shape]
    ['1', '2', '4', '6']
    """
    op = "depth_to_space"
    ca, ha, wa = _nchw_axes(op, data, layout)
    if mode not in _MODES:
        raise op_error(op, "mode", mode, f"one of {_MODES}")
    b = block_size
    c = _dim(op, data, ca)
    if b < 1 or c % (b * b):
        raise op_error(op, "block_size", block_size, f"b with b * b dividing {c} channels")
    oc = c // (b * b)
    shape = list(data.shape)
    shape[ca], shape[ha], shape[wa] = const(oc), data.shape[ha] * b, data.shape[wa] * b

    def body(*i: Var) -> PrimExpr:
        y, x = i[ha], i[wa]
        block = (y % b) * b + x % b
        ch = block * oc + i[ca] if mode == "DCR" else i[ca] * (b * b) + block
        at: list[PrimExpr] = list(i)
        at[ca], at[ha], at[wa] = ch, y // b, x // b
        return data(*at)

    return compute(shape, body, name="depth_to_space", tag=tag.INJECTIVE)


def space_to_depth(data: Tensor, block_size: int, layout: str = "NCHW") -> Tensor:
    """``[N, C, H, W]`` to ``[N, C * b², H / b, W / b]`` (or the NHWC forms): each ``b x b``
    block of pixels becomes channels, the block offset outermost.
    """
    op = "space_to_depth"
    ca, ha, wa = _nchw_axes(op, data, layout)
    b = block_size
    c, h, w = _dim(op, data, ca), _dim(op, data, ha), _dim(op, data, wa)
    if b < 1 or h % b or w % b:
        raise op_error(op, "block_size", block_size, f"a divisor of the height {h} and width {w}")
    shape = list(data.shape)
    shape[ca], shape[ha], shape[wa] = const(c * b * b), const(h // b), const(w // b)

    def body(*i: Var) -> PrimExpr:
        block, ch = i[ca] // c, i[ca] % c
        at: list[PrimExpr] = list(i)
        at[ca], at[ha], at[wa] = ch, i[ha] * b + block // b, i[wa] * b + block % b
        return data(*at)

    return compute(shape, body, name="space_to_depth", tag=tag.INJECTIVE)


def _block_args(
    op: str, data: Tensor, block_shape: Sequence[int], lo: Sequence[int], hi: Sequence[int]
) -> list[int]:
    m = len(block_shape)
    if m < 1 or data.ndim < m + 1 or len(lo) != m or len(hi) != m:
        raise op_error(op, "block_shape", list(block_shape), f"1..{data.ndim - 1} blocks")
    blocks = [int(v) for v in block_shape]
    if min(blocks) < 1 or min(*lo, *hi) < 0:
        raise op_error(op, "block_shape/pads", (blocks, list(lo), list(hi)), "positive, >= 0")
    return blocks


def space_to_batch_nd(
    data: Tensor,
    block_shape: Sequence[int],
    pad_before: Sequence[int],
    pad_after: Sequence[int],
    pad_value: float = 0.0,
) -> Tensor:
    """``[N, S1..SM, R...]``: pad each spatial axis, split it into ``block_shape`` blocks and
    move the offsets within a block into the batch: ``[N * prod(block), P1/b1..PM/bM, R...]``
    (output batch ``offset * N + n``, the offsets row-major).
    """
    op = "space_to_batch_nd"
    blocks = _block_args(op, data, block_shape, pad_before, pad_after)
    m = len(blocks)
    n = _dim(op, data, 0)
    spatial = [_dim(op, data, 1 + k) for k in range(m)]
    padded = [s + pad_before[k] + pad_after[k] for k, s in enumerate(spatial)]
    if any(p % bk for p, bk in zip(padded, blocks, strict=True)):
        raise op_error(op, "padded shape", padded, f"multiples of the blocks {blocks}")
    total = 1
    for bk in blocks:
        total *= bk
    shape = [const(n * total), *[const(p // bk) for p, bk in zip(padded, blocks, strict=True)]]
    shape += list(data.shape[1 + m :])

    def body(*i: Var) -> PrimExpr:
        offset, batch = i[0] // n, i[0] % n
        at: list[PrimExpr] = [batch]
        inside = []
        rest = offset
        offs: list[PrimExpr] = []
        for bk in reversed(blocks):
            offs.append(rest % bk)
            rest = rest // bk
        offs.reverse()
        for k in range(m):
            pos = i[1 + k] * blocks[k] + offs[k] - pad_before[k]
            inside += [pos >= 0, pos < spatial[k]]
            at.append(pos)
        at += list(i[1 + m :])
        return if_then_else(_all(*inside), data(*at), const(pad_value, data.dtype))

    return compute(shape, body, name="space_to_batch_nd", tag=tag.INJECTIVE)


def batch_to_space_nd(
    data: Tensor,
    block_shape: Sequence[int],
    crop_begin_list: Sequence[int],
    crop_end_list: Sequence[int],
) -> Tensor:
    """The inverse of :func:`space_to_batch_nd`: ``[N * prod(block), S1..SM, R...]`` to
    ``[N, S1*b1 - crops..., R...]``, cropping ``crop_begin_list``/``crop_end_list``.
    """
    op = "batch_to_space_nd"
    blocks = _block_args(op, data, block_shape, crop_begin_list, crop_end_list)
    m = len(blocks)
    total = 1
    for bk in blocks:
        total *= bk
    nb = _dim(op, data, 0)
    if nb % total:
        raise op_error(op, "batch", nb, f"a multiple of the {total} blocks")
    n = nb // total
    spatial = [_dim(op, data, 1 + k) for k in range(m)]
    sizes = [
        s * bk - crop_begin_list[k] - crop_end_list[k]
        for k, (s, bk) in enumerate(zip(spatial, blocks, strict=True))
    ]
    if min(sizes) < 1:
        raise op_error(
            op, "crops", (list(crop_begin_list), list(crop_end_list)), "less than the size"
        )
    shape = [const(n), *[const(v) for v in sizes], *data.shape[1 + m :]]

    def body(*i: Var) -> PrimExpr:
        offset: PrimExpr = const(0)
        at: list[PrimExpr] = []
        for k in range(m):
            full = i[1 + k] + crop_begin_list[k]
            offset = offset * blocks[k] + full % blocks[k]
            at.append(full // blocks[k])
        return data(offset * n + i[0], *at, *i[1 + m :])

    return compute(shape, body, name="batch_to_space_nd", tag=tag.INJECTIVE)


def dilate(
    data: Tensor,
    strides: Sequence[ExprLike],
    dilation_value: float = 0.0,
    name: str = "DilatedInput",
) -> Tensor:
    """``data`` with ``strides[i] - 1`` elements of ``dilation_value`` between neighbours
    along axis ``i``: extent ``(n - 1) * s + 1``.
    """
    op = "dilate"
    if len(strides) != data.ndim:
        raise op_error(op, "strides", list(strides), f"{data.ndim} values, one per axis")
    given = [const_int(s) for s in strides]
    steps = [s for s in given if s is not None and s >= 1]
    if len(steps) != len(given):
        raise op_error(op, "strides", list(strides), "positive constant ints")
    shape = [(d - 1) * s + 1 for d, s in zip(data.shape, steps, strict=True)]

    def body(*i: Var) -> PrimExpr:
        on_grid = [v % s == 0 for v, s in zip(i, steps, strict=True) if s != 1]
        at = [v // s if s != 1 else v for v, s in zip(i, steps, strict=True)]
        if not on_grid:
            return data(*at)
        return if_then_else(_all(*on_grid), data(*at), const(dilation_value, data.dtype))

    return compute(shape, body, name=name, tag=tag.INJECTIVE)
