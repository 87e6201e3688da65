"""ResNet workloads (TVM's ``relay.testing.resnet``): the pre-activation residual network of
He et al., "Identity Mappings in Deep Residual Networks" (2016), as a graph function with
initialized parameters.

Each residual unit normalizes and activates before its convolutions (batch norm → relu →
conv, twice, or three times with a bottleneck) and adds a shortcut: the input itself, or a
1x1 convolution of the activated input where the shape changes.
"""

from __future__ import annotations

import numpy as np

from ...ffi.errors import TVMValueError
from ...graph import Expr, Function, IRModule, TensorType, Var
from .. import nn
from .. import op as _op
from . import layers
from .workload import create_workload, function_of

__all__ = ["get_net", "get_workload", "residual_unit", "resnet"]

_EPS = 2e-5
#: Units per stage, by depth (ImageNet-sized inputs).
_UNITS = {
    18: [2, 2, 2, 2],
    34: [3, 4, 6, 3],
    50: [3, 4, 6, 3],
    101: [3, 4, 23, 3],
    152: [3, 8, 36, 3],
    200: [3, 24, 36, 3],
    269: [3, 30, 48, 8],
}


def _bn_relu(data: Expr, name: str) -> Expr:
    return nn.relu(layers.batch_norm_infer(data, name, epsilon=_EPS))


def residual_unit(
    data: Expr, num_filter: int, stride: int, dim_match: bool, name: str, bottle_neck: bool
) -> Expr:
    """One pre-activation residual unit with ``num_filter`` output channels."""
    act1 = _bn_relu(data, f"{name}_bn1")
    if bottle_neck:
        quarter = num_filter // 4
        conv1 = layers.conv2d(act1, quarter, (1, 1), f"{name}_conv1", (stride, stride))
        conv2 = layers.conv2d(
            _bn_relu(conv1, f"{name}_bn2"), quarter, (3, 3), f"{name}_conv2", padding=(1, 1)
        )
        body = layers.conv2d(_bn_relu(conv2, f"{name}_bn3"), num_filter, (1, 1), f"{name}_conv3")
    else:
        conv1 = layers.conv2d(
            act1, num_filter, (3, 3), f"{name}_conv1", (stride, stride), padding=(1, 1)
        )
        body = layers.conv2d(
            _bn_relu(conv1, f"{name}_bn2"), num_filter, (3, 3), f"{name}_conv2", padding=(1, 1)
        )
    shortcut = (
        data
        if dim_match
        else layers.conv2d(act1, num_filter, (1, 1), f"{name}_sc", (stride, stride))
    )
    return _op.add(body, shortcut)


def resnet(
    units: list[int],
    num_stages: int,
    filter_list: list[int],
    num_classes: int,
    data_shape: tuple[int, ...],
    bottle_neck: bool = True,
    dtype: str = "float32",
) -> Function:
    """The network: a stem, ``num_stages`` stages of residual units, and the classifier."""
    if len(units) != num_stages or len(filter_list) != num_stages + 1:
        raise TVMValueError(
            f"resnet: {num_stages} stages need {num_stages} unit counts and "
            f"{num_stages + 1} filter counts, got {units} and {filter_list}"
        )
    data = Var("data", TensorType(tuple(data_shape), dtype))
    body: Expr = layers.batch_norm_infer(data, "bn_data", epsilon=_EPS, scale=False)
    if data_shape[2] <= 32:  # noqa: PLR2004 - CIFAR-sized images: a 3x3 stem, no pooling
        body = layers.conv2d(body, filter_list[0], (3, 3), "conv0", padding=(1, 1))
    else:
        body = layers.conv2d(body, filter_list[0], (7, 7), "conv0", (2, 2), padding=(3, 3))
        body = _bn_relu(body, "bn0")
        body = nn.max_pool2d(body, pool_size=(3, 3), strides=(2, 2), padding=(1, 1))
    for i in range(num_stages):
        stride = 1 if i == 0 else 2
        body = residual_unit(
            body, filter_list[i + 1], stride, False, f"stage{i + 1}_unit1", bottle_neck
        )
        for j in range(units[i] - 1):
            body = residual_unit(
                body, filter_list[i + 1], 1, True, f"stage{i + 1}_unit{j + 2}", bottle_neck
            )
    body = nn.batch_flatten(nn.global_avg_pool2d(_bn_relu(body, "bn1")))
    return function_of(nn.softmax(layers.dense_add_bias(body, num_classes, "fc1")), data)


def get_net(
    batch_size: int,
    num_classes: int,
    num_layers: int = 50,
    image_shape: tuple[int, int, int] = (3, 224, 224),
    layout: str = "NCHW",
    dtype: str = "float32",
) -> Function:
    """The ResNet of ``num_layers`` layers for ``batch_size`` images of ``image_shape``."""
    if layout != "NCHW":
        raise TVMValueError(f"resnet: layout {layout!r} is not supported; use 'NCHW'")
    height = image_shape[1]
    if height <= 28:  # noqa: PLR2004 - CIFAR-style: three stages of equal units
        if (num_layers - 2) % 9 == 0 and num_layers >= 164:  # noqa: PLR2004
            per_unit, bottle_neck, filters = (num_layers - 2) // 9, True, [16, 64, 128, 256]
        elif (num_layers - 2) % 6 == 0 and num_layers < 164:  # noqa: PLR2004
            per_unit, bottle_neck, filters = (num_layers - 2) // 6, False, [16, 16, 32, 64]
        else:
            raise TVMValueError(f"resnet: no {num_layers}-layer network for small images")
        units, stages = [per_unit] * 3, 3
    else:
        if num_layers not in _UNITS:
            raise TVMValueError(
                f"resnet: no {num_layers}-layer network; choose one of {sorted(_UNITS)}"
            )
        bottle_neck = num_layers >= 50  # noqa: PLR2004
        filters = [64, 256, 512, 1024, 2048] if bottle_neck else [64, 64, 128, 256, 512]
        units, stages = _UNITS[num_layers], 4
    shape = (batch_size, *image_shape)
    return resnet(units, stages, filters, num_classes, shape, bottle_neck, dtype)


def get_workload(
    batch_size: int = 1,
    num_classes: int = 1000,
    num_layers: int = 18,
    image_shape: tuple[int, int, int] = (3, 224, 224),
    layout: str = "NCHW",
    dtype: str = "float32",
) -> tuple[IRModule, dict[str, np.ndarray]]:
    """``(mod, params)``: the ResNet as ``mod["main"]`` (inputs ``data`` then the weights) and
    its weights initialized by :class:`~pytvm.relay.testing.init.Xavier`.
    """
    net = get_net(batch_size, num_classes, num_layers, image_shape, layout, dtype)
    return create_workload(net)
