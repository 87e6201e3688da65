"""Knobs of the CPU convolution schedules (AutoTVM templates ``<row>.x86``): each space's points
build kernels that match numpy, and the fallback configuration builds the kernel of the
schedule's own choices (the same code as a configuration set to the knobs' defaults).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest

import pytvm
from pytvm import autotvm, te
from pytvm.autotvm.task.space import ConfigEntity, ConfigSpace, FallbackConfigEntity
from pytvm.ffi.errors import TVMValueError
from pytvm.graph.op.layout import layout_transform_np
from pytvm.target import Target
from pytvm.testing.autotvm import fallback_point
from pytvm.topi import testing
from pytvm.topi.x86 import strategy
from pytvm.topi.x86.strategy import OpWorkload

F32 = "float32"
#: Configurations built per workload (spread over its space, the first and last included).
_SAMPLES = 10


@dataclasses.dataclass(frozen=True)
class Conv:
    """A convolution workload: NCHW data, an OIHW weight, its attributes, and the row the
    strategy table picks for it.
    """

    row: str
    data: tuple[int, int, int, int]
    weight: tuple[int, int, int, int]
    stride: int = 1
    pad: int = 0
    groups: int = 1
    constant: bool = True


CONVS = [
    Conv("conv2d_nchw_packed", (1, 32, 14, 14), (64, 32, 3, 3), pad=1),  # 3x3, a resnet block
    Conv("conv2d_nchw_packed", (1, 3, 30, 30), (16, 3, 7, 7), stride=2, pad=3),  # a stem
    Conv("conv2d_nchw_pointwise", (1, 24, 8, 8), (40, 24, 1, 1)),  # 1x1
    Conv("conv2d_nchw", (1, 8, 12, 12), (12, 8, 3, 3), pad=1, constant=False),  # direct
    Conv("depthwise_conv2d_nchw_rows", (1, 16, 15, 15), (16, 1, 3, 3), 2, 1, 16, False),
    Conv("depthwise_conv2d_nchw_channels", (1, 32, 12, 12), (32, 1, 3, 3), 1, 1, 32),
]


class Built:
    """A workload's row, packed weight layout, and its arrays and numpy reference."""

    def __init__(self, conv: Conv) -> None:
        self.conv = conv
        rng = np.random.default_rng(0)
        self.x = rng.standard_normal(conv.data).astype(F32)
        self.w = rng.standard_normal(conv.weight).astype(F32)
        attrs: dict[str, Any] = {
            "strides": (conv.stride, conv.stride),
            "padding": (conv.pad,) * 4,
            "dilation": (1, 1),
            "groups": conv.groups,
            "kernel_layout": "OIHW",
        }
        wl = OpWorkload("nn.conv2d", conv.data, conv.weight, F32, F32, attrs, conv.constant)
        with Target("llvm"):
            row = strategy.select("nn.conv2d", wl)
            assert row.name == conv.row, f"{conv}: the table picks {row.name}"
            self.wk = self.w
            if row.weight_layout is not None:
                layout = row.weight_layout(wl)
                self.wk = layout_transform_np(self.w, "OIHW", layout)
                attrs = {**attrs, "kernel_layout": layout}
                wl = dataclasses.replace(wl, weight_shape=self.wk.shape, attrs=attrs)
                assert strategy.select("nn.conv2d", wl).name == conv.row
        self.row, self.wl = row, wl
        if conv.groups == 1:
            self.want = testing.conv2d_nchw_python(self.x, self.w, conv.stride, conv.pad)
        else:
            ch = conv.data[1]
            filt = self.w.reshape(ch, conv.weight[0] // ch, *conv.weight[2:])
            self.want = testing.depthwise_conv2d_python_nchw(self.x, filt, conv.stride, conv.pad)
        self.space = ConfigSpace()
        with Target("llvm"), autotvm.ApplyConfig(self.space):
            self.schedule()

    def schedule(self) -> tuple[Any, list[Any]]:
        """The row's kernel (output through a bias and relu, as the graph fuses them) under the
        current dispatch context: ``(schedule, tensors)``.
        """
        x = te.placeholder(self.x.shape, F32, "x")
        w = te.placeholder(self.wk.shape, F32, "w")
        b = te.placeholder((self.want.shape[1], 1, 1), F32, "b")
        conv = self.row.compute(x, w, self.wl)
        out = pytvm.topi.nn.relu(pytvm.topi.add(conv, b))
        return self.row.schedule([out]), [x, w, b, out]

    def build(self, config: Any = None) -> Any:
        """The kernel built under ``config`` (a point of the space, or a fallback; None: the
        dispatch context as it is, the root fallback context outside any ``with``).
        """
        with Target("llvm"):
            if config is None:
                s, args = self.schedule()
            else:
                with autotvm.ApplyConfig(config):
                    s, args = self.schedule()
            return pytvm.build(s, args, target="llvm", name="conv")

    def check(self, mod: Any) -> None:
        bias = np.linspace(-1, 1, self.want.shape[1], dtype=F32).reshape(-1, 1, 1)
        got = pytvm.nd.empty(self.want.shape, F32)
        mod["conv"](pytvm.nd.array(self.x), pytvm.nd.array(self.wk), pytvm.nd.array(bias), got)
        want = np.maximum(self.want + bias, 0)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-4)


@pytest.fixture(scope="module", params=CONVS, ids=lambda c: f"{c.row}-{c.data}-{c.weight}")
def built(request: pytest.FixtureRequest) -> Built:
    return Built(request.param)


def test_space_has_knobs(built: Built) -> None:
    assert len(built.space) > 1, built.space
    for name, space in built.space.space_map.items():
        assert len(space) >= 1, name


def test_points_of_the_space_match_numpy(built: Built) -> None:
    """Points spread over the space build kernels matching numpy; a point the target's
    registers cannot hold is refused at schedule time with a TVMValueError.
    """
    n = len(built.space)
    picks = sorted({0, n - 1, *np.random.default_rng(1).integers(0, n, _SAMPLES - 2).tolist()})
    built_ok = 0
    for i in picks:
        try:
            mod = built.build(built.space.get(i))
        except TVMValueError as err:
            assert "accumulators" in str(err), err
            continue
        built.check(mod)
        built_ok += 1
    assert built_ok >= min(len(picks), 3)


def _defaults(built: Built) -> ConfigEntity:
    """The point of the space whose knobs hold the fallback's values."""
    return fallback_point(built.space, built.schedule)


def test_fallback_builds_the_defaults_kernel(built: Built) -> None:
    """An untuned build (no dispatch context entered), a build under a fresh fallback and one
    under the space's point holding the defaults generate the same LLVM IR.
    """
    untuned = built.build()
    built.check(untuned)
    fallback = built.build(FallbackConfigEntity())
    defaults = built.build(_defaults(built))
    assert untuned.get_source("ll") == fallback.get_source("ll")
    assert untuned.get_source("ll") == defaults.get_source("ll")
