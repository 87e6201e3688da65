"""AlterOpLayout: constant weights of convolutions and dense layers packed for vector kernels.

A layer with a plain constant weight gets the weight layout of the implementation the CPU
strategy table (``topi.x86.strategy``) selects for it, when that row packs its weight:
``nn.dense(x, W)`` with a constant ``W [N, K]`` becomes
``nn.dense(x, layout_transform(W, "NK", "NK<bn>n"), weight_layout="NK<bn>n")``: panels
``[ceil(N / bn), K, bn]`` (zero-filled past N, which the ``units`` attribute keeps) read by
``topi.nn.dense_pack``; ``bn`` is the target's panel width. ``nn.conv2d`` with
``groups=1`` and a constant kernel ``[F, C, KH, KW]`` gets ``kernel_layout="OIHW<fb>o"``
(blocks of ``fb`` output channels,
from ``topi.x86.conv2d_channel_block``, the last one padded with zero channels) and
``channels=F``, lowered by ``topi.nn.conv2d_nchw_packed``, unless the pointwise or the direct
convolution (which read the plain kernel) outranks it. The data stays NCHW, so no other
operator changes. The following FoldConstant computes the packed weights once, at build time.
Block sizes come from the current target.
"""

from __future__ import annotations

import re

import numpy as np

from ...ir.transform import Pass, PassContext, map_functions
from ...topi.nn.conv2d_int8 import conv2d_int8_kernel_pack
from ...topi.x86.strategy import OpWorkload, select
from ..attrs import Attrs
from ..expr import Call, Constant, Expr, Function
from ..functor import rewrite_function
from ..module import IRModule
from ..ty import TensorType

__all__ = ["AlterOpLayout", "alter_op_layout"]

#: An int8 kernel for 8-bit dot products: int32 words of four input channels' bytes.
_INT8_LAYOUT = re.compile(r"OIHW(\d+)o4i")


def _packed_weight(weight: Constant, src: str, dst: str) -> Call | Constant:
    int8 = _INT8_LAYOUT.fullmatch(dst)
    if int8 is not None and weight.data.dtype == np.int8:  # four channels' bytes per int32
        return Constant(conv2d_int8_kernel_pack(weight.data, int(int8.group(1))))
    return Call("layout_transform", (weight,), Attrs.of(src_layout=src, dst_layout=dst))


def _alter_weight(node: Call, key: str, plain: str) -> Call | None:
    """``node`` with its constant weight in the layout the selected implementation packs it
    into (None: the weight is not a plain constant, or the implementation reads it plain).
    """
    data, weight = node.args
    if node.attrs.get(key) not in (None, "", plain) or not isinstance(weight, Constant):
        return None
    if not isinstance(data.checked_type, TensorType):
        return None
    if not isinstance(weight.checked_type, TensorType):
        return None
    workload = OpWorkload.of(
        str(node.op), data.checked_type, weight.checked_type, node.attrs, weight_constant=True
    )
    row = select(str(node.op), workload)
    if row.weight_layout is None:
        return None
    layout = row.weight_layout(workload)
    attrs: dict[str, object] = {key: layout}
    if node.op in ("nn.conv2d", "qnn.conv2d"):  # the output channels a padded block hides
        attrs["channels"] = int(weight.checked_type.shape[0])
    return Call(
        node.op,
        (data, _packed_weight(weight, plain, layout)),
        node.attrs.with_values(**attrs),
        node.name,
    )


def _alter_dense(node: Call) -> Call | None:
    """``node`` with its weight in panels, and ``units`` (N) set: the last panel may be
    zero-filled past N, so the panels' columns are not the output's.
    """
    packed = _alter_weight(node, "weight_layout", "NK")
    weight_type = node.args[1].checked_type
    if packed is None or not isinstance(weight_type, TensorType):
        return packed
    units = int(weight_type.shape[0])
    return Call(packed.op, packed.args, packed.attrs.with_values(units=units), packed.name)


def _alter(node: Expr) -> Expr | None:
    if not isinstance(node, Call):
        return None
    if node.op == "nn.dense":
        return _alter_dense(node)
    if node.op in ("nn.conv2d", "qnn.conv2d"):
        return _alter_weight(node, "kernel_layout", "OIHW")
    return None


def _alter_function(func: Function) -> Function:
    if func.attrs.get("Primitive") or func.attrs.get("Compiler"):
        return func
    return rewrite_function(func, _alter)


def alter_op_layout(mod: IRModule, ctx: PassContext | None = None) -> IRModule:
    """Pack the constant weights of dense layers and convolutions for the current target."""
    del ctx
    return map_functions(mod, _alter_function)


AlterOpLayout = Pass("AlterOpLayout", 2, alter_op_layout)
