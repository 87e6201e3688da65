"""Default schedules take their vector width and parallelism from the target, never from the
machine they run on; ``schedule_default`` picks the schedule of a fused group's anchor.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from pytvm import te, topi
from pytvm.target import Target

AVX2 = "c -mattr=+avx2"
AVX512 = "c -mattr=+avx512f"
SCALAR_MCU = "c -mcpu=cortex-m4 -mtriple=armv7m-none-eabi"


def _lowered(target: str, build: Callable[[], tuple[list[te.Tensor], list[te.Tensor]]],
             schedule: Callable[[list[te.Tensor]], Any]) -> str:  # fmt: skip
    with Target(target):
        inputs, outputs = build()
        s = schedule(outputs)
        return str(te.lower_schedule(s, [*inputs, *outputs], "kernel"))


def _matmul() -> tuple[list[te.Tensor], list[te.Tensor]]:
    a = te.placeholder((64, 96), name="A")
    b = te.placeholder((96, 128), name="B")
    return [a, b], [topi.nn.matmul(a, b)]


def _conv() -> tuple[list[te.Tensor], list[te.Tensor]]:
    x = te.placeholder((1, 8, 18, 32), name="x")
    w = te.placeholder((16, 8, 3, 3), name="w")
    return [x, w], [topi.nn.relu(topi.nn.conv2d_nchw(x, w, 1, 1, 1))]


def _elementwise() -> tuple[list[te.Tensor], list[te.Tensor]]:
    a = te.placeholder((64, 256), name="A")
    return [a], [topi.sigmoid(topi.add(a, 1.0))]


@pytest.mark.parametrize(
    ("build", "schedule"),
    [
        (_matmul, topi.x86.schedule_matmul),
        (_conv, topi.x86.schedule_conv2d_nchw),
        (_elementwise, topi.generic.schedule_injective),
    ],
)
def test_vector_width_follows_the_target(
    build: Callable[[], tuple[list[te.Tensor], list[te.Tensor]]],
    schedule: Callable[[list[te.Tensor]], Any],
) -> None:
    avx2 = _lowered(AVX2, build, schedule)
    avx512 = _lowered(AVX512, build, schedule)
    assert "vectorized" in avx2 and "vectorized" in avx512
    assert avx2 != avx512
    mcu = _lowered(SCALAR_MCU, build, schedule)
    assert "vectorized" not in mcu  # one lane: nothing to vectorize
    assert "parallel" not in mcu  # one core: no parallel launch


def test_small_work_is_not_run_in_parallel() -> None:
    def tiny() -> tuple[list[te.Tensor], list[te.Tensor]]:
        a = te.placeholder((4, 8), name="A")
        return [a], [topi.exp(a)]

    def big() -> tuple[list[te.Tensor], list[te.Tensor]]:
        a = te.placeholder((256, 256), name="A")
        return [a], [topi.exp(a)]

    assert "parallel" not in _lowered(AVX2, tiny, topi.generic.schedule_injective)
    assert "parallel" in _lowered(AVX2, big, topi.generic.schedule_injective)


def test_injective_producers_are_inlined_into_the_output() -> None:
    text = _lowered(AVX2, _elementwise, topi.generic.schedule_injective)
    assert "allocate" not in text  # the add is computed inside the sigmoid's loop


def test_schedule_default_picks_the_anchor_of_a_fused_group() -> None:
    _, outs = _conv()
    assert topi.x86.anchor_tag(outs) == "conv2d_nchw"
    _, outs = _elementwise()
    assert topi.x86.anchor_tag(outs) is None
    a = te.placeholder((4, 16), name="A")
    assert topi.x86.anchor_tag(topi.nn.softmax(topi.nn.relu(a))) == "softmax_output"
    with Target(AVX2):
        x, w = te.placeholder((1, 8, 18, 32), name="x"), te.placeholder((16, 8, 3, 3), name="w")
        y = topi.nn.relu(topi.nn.conv2d_nchw(x, w, 1, 1, 1))
        text = str(te.lower_schedule(topi.x86.schedule_default(y), [x, w, y], "fused"))
    assert "conv2d_nchw.local" in text  # the convolution's tiled schedule, relu fused into it
