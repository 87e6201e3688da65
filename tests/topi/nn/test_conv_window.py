"""The window a 2-d convolution slides: attributes, output size, padded stage, taps."""

from __future__ import annotations

import pytest

from pytvm import te, topi
from pytvm.ffi.errors import TVMValueError
from pytvm.topi.nn.conv_window import conv_window


def test_window_parses_attributes_and_sizes_the_output() -> None:
    x = te.placeholder((1, 3, 9, 9), name="x")
    win = conv_window("conv", x, (3, 3), 2, (1, 1, 0, 0), 1)
    assert (win.stride, win.dilation, win.padding) == ((2, 2), (1, 1), (1, 1, 0, 0))
    assert win.output_size(9, 9) == (4, 4) and win.dtype == "float32"
    assert [str(i) for i in win.taps(te.var("y"), te.var("x"))] == [
        "((y * 2) + ry)",
        "((x * 2) + rx)",
    ]


def test_window_pads_only_a_padded_input() -> None:
    x = te.placeholder((1, 3, 9, 9), name="x")
    assert conv_window("conv", x, (3, 3), 1, 0, 1).padded(x) is x
    padded = conv_window("conv", x, (3, 3), 1, (0, 1), 1).padded(x)
    assert padded.op.name == "pad_temp" and [str(d) for d in padded.shape] == ["1", "3", "9", "11"]


def test_window_names_the_operator_and_attribute() -> None:
    x = te.placeholder((1, 3, 9, 9), name="x")
    with pytest.raises(TVMValueError, match=r"tconv: bad strides 0"):
        conv_window("tconv", x, (3, 3), 0, 1, 1, stride_attr="strides")
    with pytest.raises(TVMValueError, match=r"conv: bad kernel width 11"):
        conv_window("conv", x, (3, 11), 1, 0, 1).output_size(9, 9)


def test_the_forward_convolutions_size_their_output_alike() -> None:
    x = te.placeholder((1, 4, 9, 9), name="x")
    outs = [
        topi.nn.conv2d_nchw(x, te.placeholder((8, 4, 3, 3), name="w"), 2, 1, 2),
        topi.nn.group_conv2d_nchw(x, te.placeholder((8, 2, 3, 3), name="w"), 2, 1, 2, 2),
        topi.nn.depthwise_conv2d_nchw(x, te.placeholder((4, 2, 3, 3), name="w"), 2, 1, 2),
        topi.nn.conv2d_nchw_packed(x, te.placeholder((1, 4, 3, 3, 8), name="w"), 2, 1, 2),
    ]
    for out in outs:
        assert [str(d) for d in out.shape] == ["1", "8", "4", "4"]
