"""TVM v0.18's ``tvm.micro.testing.utils``: small models microTVM's tests build."""

from __future__ import annotations

from typing import Any

from ... import relay

__all__ = ["get_conv2d_relay_module"]


def get_conv2d_relay_module() -> Any:
    """An int8 NCHW 3x3 convolution (1x3x24x24 input, 8 filters, int32 output) as an IRModule
    whose ``main`` takes ``data`` and ``weight``.
    """
    data = relay.var("data", shape=(1, 3, 24, 24), dtype="int8")
    weight = relay.var("weight", shape=(8, 3, 3, 3), dtype="int8")
    conv = relay.nn.conv2d(
        data,
        weight,
        kernel_size=(3, 3),
        channels=8,
        padding=(1, 1),
        data_layout="NCHW",
        kernel_layout="OIHW",
        out_dtype="int32",
    )
    return relay.IRModule.from_expr(relay.Function([data, weight], conv))
