"""AlterOpLayout: constant weights of convolutions and dense layers packed for vector kernels.

``nn.dense(x, W)`` with a constant ``W [N, K]`` becomes
``nn.dense(x, layout_transform(W, "NK", "NK<bn>n"), weight_layout="NK<bn>n")``: panels
``[N // bn, K, bn]`` read by ``topi.nn.dense_pack``; ``bn`` is the target's panel width
(``topi.nn.linear.default_panel_width``), else the widest power-of-two part of it dividing N.
``nn.conv2d`` with ``groups=1`` and a constant kernel ``[F, C, KH, KW]`` gets
``kernel_layout="OIHW<fb>o"`` (blocks of ``fb`` output channels, from
``topi.x86.conv2d_channel_block``), lowered by ``topi.nn.conv2d_nchw_packed``. The data stays
NCHW, so no other operator changes. Layers whose output channels are not a whole number of
vectors keep their layout. The following FoldConstant computes the packed weights once, at
build time. Block sizes come from the current target.
"""

from __future__ import annotations

from ...ir.transform import Pass as GraphPass
from ...ir.transform import PassContext, map_functions
from ...topi.nn.linear import default_panel_width
from ...topi.x86.conv2d_packed import conv2d_channel_block
from ...topi.x86.conv2d_pointwise import conv2d_pointwise_applies
from ..attrs import Attrs
from ..expr import Call, Constant, Expr, Function
from ..functor import rewrite_function
from ..module import IRModule
from ..ty import TensorType

__all__ = ["AlterOpLayout", "alter_op_layout"]


def _packed_weight(weight: Constant, src: str, dst: str) -> Call:
    return Call("layout_transform", (weight,), Attrs.of(src_layout=src, dst_layout=dst))


def _is_float(ty: object) -> bool:
    return isinstance(ty, TensorType) and str(ty.dtype).startswith("float")


#: Narrowest panel worth packing (a vector of four lanes).
_MIN_PANEL = 4


def _dense_panel(units: int, dtype: str) -> int | None:
    """Panel width for ``units`` output columns: the target's panel width (two vectors), else
    the widest power-of-two fraction of it (down to four lanes) that divides ``units``.
    """
    bn = default_panel_width(dtype)
    while bn >= _MIN_PANEL and units % bn:
        bn //= 2
    return bn if bn >= _MIN_PANEL else None


def _alter_dense(node: Call) -> Call | None:
    data, weight = node.args
    if node.attrs.get("weight_layout") not in (None, "", "NK") or not isinstance(weight, Constant):
        return None
    ty = weight.checked_type
    if not (_is_float(ty) and _is_float(data.checked_type)) or len(ty.shape) != 2:  # noqa: PLR2004
        return None
    bn = _dense_panel(int(ty.shape[0]), str(ty.dtype))
    if bn is None:
        return None
    layout = f"NK{bn}n"
    return Call(
        node.op,
        (data, _packed_weight(weight, "NK", layout)),
        node.attrs.with_values(weight_layout=layout),
        node.name,
    )


def _alter_conv2d(node: Call) -> Call | None:
    data, weight = node.args
    attrs = node.attrs
    if (
        attrs.get("groups", 1) != 1
        or attrs.get("kernel_layout") not in (None, "", "OIHW")
        or attrs.get("data_layout") not in (None, "", "NCHW")
        or not isinstance(weight, Constant)
    ):
        return None
    ty = weight.checked_type
    if not (_is_float(ty) and _is_float(data.checked_type)) or len(ty.shape) != 4:  # noqa: PLR2004
        return None
    data_ty = data.checked_type
    assert isinstance(data_ty, TensorType)
    strides, padding = attrs["strides"], attrs["padding"]
    if conv2d_pointwise_applies(data_ty.shape, ty.shape, strides, padding, 1, str(ty.dtype)):
        return None  # pointwise: the plain kernel's values are broadcast as they are
    fb = conv2d_channel_block(int(ty.shape[0]), str(ty.dtype))
    if fb is None:
        return None
    layout = f"OIHW{fb}o"
    return Call(
        node.op,
        (data, _packed_weight(weight, "OIHW", layout)),
        attrs.with_values(kernel_layout=layout),
        node.name,
    )


def _alter(node: Expr) -> Expr | None:
    if not isinstance(node, Call):
        return None
    if node.op == "nn.dense":
        return _alter_dense(node)
    if node.op == "nn.conv2d":
        return _alter_conv2d(node)
    return None


def _alter_function(func: Function) -> Function:
    if func.attrs.get("Primitive") or func.attrs.get("Compiler"):
        return func
    return rewrite_function(func, _alter)


def alter_op_layout(mod: IRModule, ctx: PassContext | None = None) -> IRModule:
    """Pack the constant weights of dense layers and convolutions for the current target."""
    del ctx
    return map_functions(mod, _alter_function)


AlterOpLayout = GraphPass("AlterOpLayout", 2, alter_op_layout)
