"""Direct convolutions in any layout: TVM's generic ``conv`` and its named forms
(``conv1d_ncw``/``nwc``, ``group_conv1d_*``, ``conv2d_nhwc``, ``conv2d_hwcn``,
``group_conv2d_nhwc``, ``depthwise_conv2d_nhwc``, ``conv3d_ncdhw``/``ndhwc``).

Layouts are letters: the data's ``N``, ``C`` and spatial ``D``/``H``/``W``; the kernel's ``O``
(output channels), ``I`` (input channels per group) and the same spatial letters. Strides and
dilations follow the spatial axes in the data layout's order; ``padding`` is an int, a tuple
(one per spatial axis, or all befores then all afters), ``"SAME"`` or ``"VALID"``. A padded
input is a stage named ``pad_temp``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...te.operation import compute, reduce_axis
from ...te.reduction import sum as _sum
from ...te.tensor import Tensor
from ...tir.expr import PrimExpr, Var
from .. import tag
from .._shape import const_int, op_error
from .padding import pad
from .utils import get_pad_tuple_generic

__all__ = [
    "conv",
    "conv1d",
    "conv1d_ncw",
    "conv1d_nwc",
    "conv2d_hwcn",
    "conv2d_nhwc",
    "conv3d_ncdhw",
    "conv3d_ndhwc",
    "depthwise_conv2d_nhwc",
    "group_conv1d_ncw",
    "group_conv1d_nwc",
    "group_conv2d_nhwc",
]

DEFAULT_KERNEL_LAYOUTS = {
    "NCW": "OIW",
    "NWC": "WIO",
    "NCHW": "OIHW",
    "NHWC": "HWIO",
    "HWCN": "HWIO",
    "NCDHW": "OIDHW",
    "NDHWC": "DHWIO",
}


def _spatial(op: str, layout: str, fixed: str) -> list[str]:
    """The spatial letters of ``layout`` in order; ``fixed`` are its non-spatial letters."""
    letters = [ch for ch in layout if ch not in fixed]
    if sorted(fixed) != sorted(ch for ch in layout if ch in fixed) or len(set(layout)) != len(
        layout
    ):
        raise op_error(op, "layout", layout, f"each of {fixed!r} once and spatial D/H/W")
    if not letters or any(ch not in "DHW" for ch in letters):
        raise op_error(op, "layout", layout, "spatial axes among D, H, W")
    return letters


def _ints(op: str, attr: str, value: int | Sequence[int], n: int) -> list[int]:
    vals = [value] * n if isinstance(value, int) else list(value)
    if len(vals) == 1 and n > 1:
        vals = vals * n
    out = [const_int(v) for v in vals]
    if len(out) != n or any(v is None or v < 1 for v in out):
        raise op_error(op, attr, value, f"{n} positive ints")
    return [v for v in out if v is not None]


def _dims(op: str, what: str, t: Tensor, layout: str) -> dict[str, int]:
    if t.ndim != len(layout):
        raise op_error(op, f"{what} rank", t.ndim, f"{len(layout)} for layout {layout}")
    dims = {ch: const_int(d) for ch, d in zip(layout, t.shape, strict=True)}
    if any(v is None for v in dims.values()):
        raise op_error(op, f"{what} shape", [str(d) for d in t.shape], "constant dimensions")
    return {k: v for k, v in dims.items() if v is not None}


def _conv_nd(
    op: str,
    data: Tensor,
    kernel: Tensor,
    stride: int | Sequence[int],
    padding: Any,
    dilation: int | Sequence[int],
    groups: int,
    data_layout: str,
    kernel_layout: str,
    out_dtype: str | None,
    kind: str,
) -> Tensor:
    kernel_layout = kernel_layout or DEFAULT_KERNEL_LAYOUTS.get(data_layout, "")
    spatial = _spatial(op, data_layout, "NC")
    if sorted(_spatial(op, kernel_layout, "OI")) != sorted(spatial):
        raise op_error(op, "kernel_layout", kernel_layout, f"O, I and {''.join(spatial)}")
    n_sp = len(spatial)
    d = _dims(op, "input", data, data_layout)
    k = _dims(op, "kernel", kernel, kernel_layout)
    strides = _ints(op, "stride", stride, n_sp)
    dilations = _ints(op, "dilation", dilation, n_sp)
    channels, filters, per_group = d["C"], k["O"], k["I"]
    if groups < 1 or channels % groups or filters % groups or per_group * groups != channels:
        raise op_error(
            op, "groups", groups, f"g with kernel I ({per_group}) * g = input channels {channels}"
        )
    dilated = [(k[s] - 1) * dl + 1 for s, dl in zip(spatial, dilations, strict=True)]
    befores, afters = get_pad_tuple_generic(padding, dilated)
    out_sp = []
    for s, dk, st, b, a in zip(spatial, dilated, strides, befores, afters, strict=True):
        size = (d[s] + int(b) + int(a) - dk) // st + 1
        if size < 1:
            raise op_error(op, f"kernel {s}", k[s], f"a dilated window within the input {d[s]}")
        out_sp.append(size)
    pos = {ch: i for i, ch in enumerate(data_layout)}
    src = data
    if any(int(v) for v in [*befores, *afters]):
        lo = [0] * data.ndim
        hi = [0] * data.ndim
        for s, b, a in zip(spatial, befores, afters, strict=True):
            lo[pos[s]], hi[pos[s]] = int(b), int(a)
        src = pad(data, lo, hi, name="pad_temp")
    rc = reduce_axis((0, per_group), name="rc")
    rs = {s: reduce_axis((0, k[s]), name=f"r{s.lower()}") for s in spatial}
    dtype = out_dtype or data.dtype
    filters_per_group = filters // groups

    def body(*i: Var) -> PrimExpr:
        out = dict(zip(data_layout, i, strict=True))
        oc = out["C"]
        chan = rc.var if groups == 1 else oc // filters_per_group * per_group + rc.var
        at: dict[str, PrimExpr] = {"N": out["N"], "C": chan}
        for s, st, dl in zip(spatial, strides, dilations, strict=True):
            at[s] = out[s] * st + rs[s].var * dl
        kat: dict[str, PrimExpr] = {"O": oc, "I": rc.var}
        kat.update({s: rs[s].var for s in spatial})
        a = src(*[at[ch] for ch in data_layout]).astype(dtype)
        w = kernel(*[kat[ch] for ch in kernel_layout]).astype(dtype)
        return _sum(a * w, axis=[rc, *rs.values()])  # type: ignore[no-any-return]

    sizes = dict(zip(spatial, out_sp, strict=True))
    sizes.update({"N": d["N"], "C": filters})
    return compute([sizes[ch] for ch in data_layout], body, name=op, tag=kind)


def conv(
    inp: Tensor,
    filt: Tensor,
    stride: int | Sequence[int],
    padding: Any,
    dilation: int | Sequence[int],
    groups: int,
    data_layout: str,
    kernel_layout: str = "",
    out_dtype: str | None = None,
    auto_scheduler_rewritten_layout: str | None = None,
    meta_schedule_original_shape: Any = None,
    auto_scheduler_should_rewrite_layout: bool = False,
) -> Tensor:
    """A (grouped) convolution of ``inp`` in ``data_layout`` with ``filt`` in
    ``kernel_layout`` (default: TVM's for the data layout, e.g. ``OIHW`` for ``NCHW``,
    ``HWIO`` for ``NHWC``).

    Examples
    --------
    >>> from pytvm import te, topi
    >>> x = te.placeholder((1, 9, 9, 3), name="x")
    >>> w = te.placeholder((3, 3, 3, 8), name="w")
    >>> [str(d) for d in topi.nn.conv(x, w, 1, "SAME", 1, 1, "NHWC").shape]
    ['1', '9', '9', '8']
    """
    _ = (auto_scheduler_rewritten_layout, meta_schedule_original_shape)
    _ = auto_scheduler_should_rewrite_layout
    dim = sum(ch in "DHW" for ch in data_layout)
    op = f"{'group_' if groups != 1 else ''}conv{dim}d_{data_layout.lower()}"
    return _conv_nd(
        op, inp, filt, stride, padding, dilation, groups, data_layout, kernel_layout,
        out_dtype, _TAGS.get(op, tag.COMM_REDUCE),
    )  # fmt: skip


def conv1d(
    data: Tensor,
    kernel: Tensor,
    strides: int | Sequence[int] = 1,
    padding: Any = "VALID",
    dilation: int | Sequence[int] = 1,
    groups: int = 1,
    data_layout: str = "NCW",
    kernel_layout: str = "",
    out_dtype: str | None = None,
) -> Tensor:
    """A 1-d convolution in ``NCW`` or ``NWC``."""
    op = {"NCW": "conv1d_ncw", "NWC": "conv1d_nwc"}.get(data_layout)
    if op is None:
        raise op_error("conv1d", "data_layout", data_layout, "NCW or NWC")
    if groups != 1:
        op = "group_" + op
    return _conv_nd(
        op, data, kernel, strides, padding, dilation, groups, data_layout, kernel_layout,
        out_dtype, _TAGS[op],
    )  # fmt: skip


def conv1d_ncw(
    data: Tensor,
    kernel: Tensor,
    strides: int | Sequence[int] = 1,
    padding: Any = "VALID",
    dilation: int | Sequence[int] = 1,
    out_dtype: str | None = None,
) -> Tensor:
    """``data [N, C, W]`` convolved with ``kernel [O, C, KW]``."""
    return conv1d(data, kernel, strides, padding, dilation, 1, "NCW", "OIW", out_dtype)


def conv1d_nwc(
    data: Tensor,
    kernel: Tensor,
    strides: int | Sequence[int] = 1,
    padding: Any = "VALID",
    dilation: int | Sequence[int] = 1,
    out_dtype: str | None = None,
) -> Tensor:
    """``data [N, W, C]`` convolved with ``kernel [KW, C, O]``."""
    return conv1d(data, kernel, strides, padding, dilation, 1, "NWC", "WIO", out_dtype)


def group_conv1d_ncw(
    data: Tensor,
    kernel: Tensor,
    strides: int | Sequence[int] = 1,
    padding: Any = "VALID",
    dilation: int | Sequence[int] = 1,
    groups: int = 1,
    out_dtype: str | None = None,
) -> Tensor:
    """Grouped ``conv1d_ncw``: ``kernel [O, C / groups, KW]``."""
    return conv1d(data, kernel, strides, padding, dilation, groups, "NCW", "OIW", out_dtype)


def group_conv1d_nwc(
    data: Tensor,
    kernel: Tensor,
    strides: int | Sequence[int] = 1,
    padding: Any = "VALID",
    dilation: int | Sequence[int] = 1,
    groups: int = 1,
    out_dtype: str | None = None,
) -> Tensor:
    """Grouped ``conv1d_nwc``: ``kernel [KW, C / groups, O]``."""
    return conv1d(data, kernel, strides, padding, dilation, groups, "NWC", "WIO", out_dtype)


def conv2d_nhwc(
    Input: Tensor,
    Filter: Tensor,
    stride: int | Sequence[int],
    padding: Any,
    dilation: int | Sequence[int],
    out_dtype: str | None = "float32",
    auto_scheduler_rewritten_layout: str = "",
    meta_schedule_original_shape: Any = None,
    auto_scheduler_should_rewrite_layout: bool = False,
) -> Tensor:
    """``Input [N, H, W, C]`` convolved with ``Filter [KH, KW, C, O]``."""
    _ = (auto_scheduler_rewritten_layout, meta_schedule_original_shape)
    _ = auto_scheduler_should_rewrite_layout
    return _conv_nd(
        "conv2d_nhwc", Input, Filter, stride, padding, dilation, 1, "NHWC", "HWIO", out_dtype,
        tag.CONV2D_NHWC,
    )  # fmt: skip


def conv2d_hwcn(
    Input: Tensor,
    Filter: Tensor,
    stride: int | Sequence[int],
    padding: Any,
    dilation: int | Sequence[int],
    out_dtype: str | None = None,
) -> Tensor:
    """``Input [H, W, C, N]`` convolved with ``Filter [KH, KW, C, O]``: ``[OH, OW, O, N]``."""
    return _conv_nd(
        "conv2d_hwcn", Input, Filter, stride, padding, dilation, 1, "HWCN", "HWIO", out_dtype,
        tag.CONV2D_HWCN,
    )  # fmt: skip


def group_conv2d_nhwc(
    Input: Tensor,
    Filter: Tensor,
    stride: int | Sequence[int],
    padding: Any,
    dilation: int | Sequence[int],
    groups: int,
    out_dtype: str | None = None,
) -> Tensor:
    """Grouped ``conv2d_nhwc``: ``Filter [KH, KW, C / groups, O]``."""
    return _conv_nd(
        "group_conv2d_nhwc", Input, Filter, stride, padding, dilation, groups, "NHWC", "HWIO",
        out_dtype, tag.GROUP_CONV2D_NHWC,
    )  # fmt: skip


def depthwise_conv2d_nhwc(
    Input: Tensor,
    Filter: Tensor,
    stride: int | Sequence[int],
    padding: Any,
    dilation: int | Sequence[int],
    kernel_layout: str = "HWOI",
    out_dtype: str | None = None,
) -> Tensor:
    """Depthwise convolution of ``Input [N, H, W, C]`` with ``Filter [KH, KW, C, M]``
    (``kernel_layout="HWOI"``; ``"HWIO"`` reads it as ``[KH, KW, M, C]``, and, as in TVM, any
    other value as HWOI): ``C * M`` output channels, channel ``c * M + m``.
    """
    op = "depthwise_conv2d_nhwc"
    hwio = kernel_layout == "HWIO"  # as TVM: any other value reads the filter as HWOI
    d = _dims(op, "input", Input, "NHWC")
    k = _dims(op, "kernel", Filter, "HWMC" if hwio else "HWCM")
    if k["C"] != d["C"]:
        raise op_error(op, "filter channels", k["C"], f"input channels {d['C']}")
    mult = k["M"]
    strides, dilations = _ints(op, "stride", stride, 2), _ints(op, "dilation", dilation, 2)
    dilated = [(k[s] - 1) * dl + 1 for s, dl in zip("HW", dilations, strict=True)]
    (top, left), (bottom, right) = get_pad_tuple_generic(padding, dilated)
    oh = (d["H"] + int(top) + int(bottom) - dilated[0]) // strides[0] + 1
    ow = (d["W"] + int(left) + int(right) - dilated[1]) // strides[1] + 1
    if oh < 1 or ow < 1:
        raise op_error(op, "kernel", (k["H"], k["W"]), "a dilated window within the input")
    src = Input
    if int(top) or int(left) or int(bottom) or int(right):
        src = pad(Input, [0, top, left, 0], [0, bottom, right, 0], name="pad_temp")
    ry, rx = reduce_axis((0, k["H"]), name="ry"), reduce_axis((0, k["W"]), name="rx")
    dtype = out_dtype or Input.dtype

    def body(b: Var, y: Var, x: Var, oc: Var) -> PrimExpr:
        c, m = oc // mult, oc % mult
        a = src(
            b, y * strides[0] + ry.var * dilations[0], x * strides[1] + rx.var * dilations[1], c
        )
        w = Filter(ry.var, rx.var, m, c) if hwio else Filter(ry.var, rx.var, c, m)
        return _sum(a.astype(dtype) * w.astype(dtype), axis=[ry, rx])  # type: ignore[no-any-return]

    shape = (d["N"], oh, ow, d["C"] * mult)
    return compute(shape, body, name=op, tag=tag.DEPTHWISE_CONV2D_NHWC)


def conv3d_ncdhw(
    Input: Tensor,
    Filter: Tensor,
    stride: int | Sequence[int],
    padding: Any,
    dilation: int | Sequence[int],
    groups: int = 1,
    out_dtype: str | None = None,
) -> Tensor:
    """``Input [N, C, D, H, W]`` convolved with ``Filter [O, C / groups, KD, KH, KW]``."""
    return _conv_nd(
        "conv3d_ncdhw", Input, Filter, stride, padding, dilation, groups, "NCDHW", "OIDHW",
        out_dtype, tag.CONV3D_NCDHW,
    )  # fmt: skip


def conv3d_ndhwc(
    Input: Tensor,
    Filter: Tensor,
    stride: int | Sequence[int],
    padding: Any,
    dilation: int | Sequence[int],
    groups: int = 1,
    out_dtype: str | None = "float32",
    auto_scheduler_rewritten_layout: str = "",
    meta_schedule_origin_shape: Any = None,
) -> Tensor:
    """``Input [N, D, H, W, C]`` convolved with ``Filter [KD, KH, KW, C / groups, O]``."""
    _ = (auto_scheduler_rewritten_layout, meta_schedule_origin_shape)
    return _conv_nd(
        "conv3d_ndhwc", Input, Filter, stride, padding, dilation, groups, "NDHWC", "DHWIO",
        out_dtype, tag.CONV3D_NDHWC,
    )  # fmt: skip


_TAGS = {
    "conv2d_nchw": tag.CONV2D_NCHW,
    "group_conv2d_nchw": tag.GROUP_CONV2D_NCHW,
    "conv2d_nhwc": tag.CONV2D_NHWC,
    "conv2d_hwcn": tag.CONV2D_HWCN,
    "group_conv2d_nhwc": tag.GROUP_CONV2D_NHWC,
    "conv3d_ncdhw": tag.CONV3D_NCDHW,
    "conv3d_ndhwc": tag.CONV3D_NDHWC,
    "conv1d_ncw": tag.CONV1D_NCW,
    "conv1d_nwc": tag.CONV1D_NWC,
    "group_conv1d_ncw": tag.GROUP_CONV1D_NCW,
    "group_conv1d_nwc": tag.GROUP_CONV1D_NWC,
}
