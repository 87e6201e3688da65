"""The CPU strategy table picks one implementation per workload; tags are checked where read."""

from __future__ import annotations

from typing import Any

import pytest

from pytvm import te, topi
from pytvm.ffi.errors import TVMValueError
from pytvm.target import Target
from pytvm.topi import tag
from pytvm.topi.x86 import STRATEGY, Implementation, OpWorkload, select

AVX2 = "c -mattr=+avx2"  # 8 lanes of float32


def _conv(
    data: tuple[int, ...],
    kernel: tuple[int, ...],
    pad: int = 0,
    groups: int = 1,
    constant: bool = False,
    kernel_layout: str = "OIHW",
) -> OpWorkload:
    attrs = {
        "strides": (1, 1),
        "padding": (pad,) * 4,
        "dilation": (1, 1),
        "groups": groups,
        "kernel_layout": kernel_layout,
    }
    return OpWorkload("nn.conv2d", data, kernel, "float32", "float32", attrs, constant)


def _product(
    op: str, data: tuple[int, ...], weight: tuple[int, ...], constant: bool = False, **attrs: Any
) -> OpWorkload:
    return OpWorkload(op, data, weight, "float32", "float32", attrs, constant)


def _dims(shape: tuple[int | None, ...]) -> tuple[int, ...]:
    assert None not in shape
    return tuple(d or 0 for d in shape)


CASES = [
    ("pointwise", _conv((1, 16, 8, 8), (32, 16, 1, 1)), "conv2d_nchw_pointwise"),
    (
        "pointwise_const",
        _conv((1, 16, 8, 8), (32, 16, 1, 1), constant=True),
        "conv2d_nchw_pointwise",
    ),
    ("pointwise_odd_plane", _conv((1, 16, 5, 5), (32, 16, 1, 1)), "conv2d_nchw"),
    ("conv3x3", _conv((1, 16, 8, 8), (32, 16, 3, 3), pad=1), "conv2d_nchw"),
    ("conv3x3_const", _conv((1, 32, 8, 8), (32, 32, 3, 3), 1, constant=True), "conv2d_nchw_packed"),
    (  # a tie of lanes (rows of one vector) over a short reduction: rows stored as computed
        "conv3x3_const_short",
        _conv((1, 16, 8, 8), (32, 16, 3, 3), 1, constant=True),
        "conv2d_nchw",
    ),
    ("conv_const_odd_f", _conv((1, 16, 8, 8), (12, 16, 3, 3), 1, constant=True), "conv2d_nchw"),
    (
        "conv_packed_layout",
        _conv((1, 16, 8, 8), (2, 16, 3, 3, 16), 1, kernel_layout="OIHW16o"),
        "conv2d_nchw_packed",
    ),
    ("depthwise", _conv((1, 16, 8, 8), (16, 1, 3, 3), 1, 16), "depthwise_conv2d_nchw_rows"),
    ("depthwise_wide_pad", _conv((1, 4, 3, 3), (4, 1, 9, 9), 4, 4), "depthwise_conv2d_nchw"),
    (
        "depthwise_const",  # rows of 8 in a pitch of 16: channel blocks
        _conv((1, 16, 8, 8), (16, 1, 3, 3), 1, 16, True),
        "depthwise_conv2d_nchw_channels",
    ),
    ("grouped", _conv((1, 16, 8, 8), (32, 8, 3, 3), 1, 2), "group_conv2d_nchw"),
    ("grouped_const", _conv((1, 16, 8, 8), (32, 8, 3, 3), 1, 2, True), "group_conv2d_nchw"),
    ("dense", _product("nn.dense", (4, 64), (32, 64)), "dense"),
    ("dense_const", _product("nn.dense", (4, 64), (32, 64), True), "dense_pack"),
    ("dense_const_narrow", _product("nn.dense", (4, 64), (6, 64), True), "dense_pack"),
    (
        "dense_packed",
        _product("nn.dense", (4, 64), (2, 64, 16), weight_layout="NK16n"),
        "dense_pack",
    ),
    ("matmul", _product("nn.matmul", (4, 64), (64, 32)), "matmul"),
    ("matmul_nt", _product("nn.matmul", (4, 64), (32, 64), transpose_b=True), "matmul_nt"),
    ("batch_matmul", _product("nn.batch_matmul", (2, 4, 64), (2, 32, 64)), "batch_matmul"),
    (
        "batch_matmul_nn",
        _product("nn.batch_matmul", (2, 4, 64), (2, 64, 32), transpose_b=False),
        "batch_matmul_nn",
    ),
    # A computed right operand shared by a vector's worth of rows is packed into panels.
    ("dense_rows", _product("nn.dense", (16, 64), (30, 64)), "dense_matmul_pack"),
    ("matmul_rows", _product("nn.matmul", (9, 64), (64, 197)), "matmul_pack"),
    ("matmul_odd_columns", _product("nn.matmul", (2, 64), (64, 7)), "matmul_pack"),
    ("attention_qk", _product("nn.batch_matmul", (4, 197, 64), (4, 197, 64)), "batch_matmul_pack"),
    (
        "attention_pv",
        _product("nn.batch_matmul", (4, 197, 197), (4, 197, 64), transpose_b=False),
        "batch_matmul_pack",
    ),
]


@pytest.mark.parametrize(("case", "workload", "expected"), CASES, ids=[c[0] for c in CASES])
def test_table_picks_the_same_implementation_as_before(
    case: str, workload: OpWorkload, expected: str
) -> None:
    with Target(AVX2):
        assert select(workload.op, workload).name == expected


@pytest.mark.parametrize(("case", "workload", "expected"), CASES, ids=[c[0] for c in CASES])
def test_selected_compute_carries_the_row_tag_as_its_anchor(
    case: str, workload: OpWorkload, expected: str
) -> None:
    with Target(AVX2):
        row = select(workload.op, workload)
        if row.weight_layout is not None and workload.weight_constant:
            return  # the packed weight is made by AlterOpLayout first
        data = te.placeholder(_dims(workload.data_shape), name="data")
        weight = te.placeholder(_dims(workload.weight_shape), name="weight")
        out = row.compute(data, weight, workload)
        assert topi.x86.anchor_tag(out) == row.tag


def test_packed_rows_name_the_weight_layout_the_layout_pass_writes() -> None:
    with Target(AVX2):
        conv = _conv((1, 32, 8, 8), (32, 32, 3, 3), 1, constant=True)
        dense = _product("nn.dense", (4, 64), (32, 64), True)
        packed_conv, packed_dense = select(conv.op, conv), select(dense.op, dense)
        assert packed_conv.weight_layout is not None and packed_dense.weight_layout is not None
        assert packed_conv.weight_layout(conv) == "OIHW16o"
        assert packed_dense.weight_layout(dense) == "NK16n"
        pointwise = _conv((1, 16, 8, 8), (32, 16, 1, 1), constant=True)
        assert select(pointwise.op, pointwise).weight_layout is None


def test_packed_layout_with_blocks_across_groups_is_rejected_by_its_row() -> None:
    wl = _conv((1, 16, 8, 8), (1, 8, 3, 3, 16), 1, 2, kernel_layout="OIHW16o")
    row = select(wl.op, wl)
    with pytest.raises(TVMValueError, match="groups 2"):  # a block of 16 spans both groups
        row.compute(te.placeholder((1, 16, 8, 8)), te.placeholder((1, 8, 3, 3, 16)), wl)


def test_rows_are_unique_by_name_and_carry_known_tags() -> None:
    names = [r.name for r in STRATEGY]
    assert len(names) == len(set(names))
    assert all(r.tag in tag.KNOWN for r in STRATEGY)


def test_an_operator_without_rows_is_an_error() -> None:
    wl = _product("nn.conv3d", (1,), (1,))
    with pytest.raises(TVMValueError, match=r"no CPU implementation of 'nn\.conv3d'"):
        select("nn.conv3d", wl)


def test_a_row_with_an_unknown_tag_is_an_error() -> None:
    row = STRATEGY[0]
    with pytest.raises(TVMValueError, match="unknown tag 'conv2d_nhcw'"):
        Implementation("typo", row.op, "conv2d_nhcw", row.applies, row.compute, row.schedule, 0)


def test_schedule_dispatch_raises_on_an_unknown_tag() -> None:
    x = te.placeholder((4, 8), name="x")
    y = te.compute((4, 8), lambda i, j: x[i, j] * 2, name="y", tag="elemwsie")
    with pytest.raises(TVMValueError, match=r"unknown tag 'elemwsie' of stage 'y'.*'elemwise'"):
        topi.x86.schedule_default(y)
    with pytest.raises(TVMValueError, match="unknown tag 'elemwsie'"):
        topi.x86.schedule_injective(y)


def test_suffixed_and_untagged_stages_are_known() -> None:
    assert tag.check("elemwise,relu") == "elemwise,relu"
    x = te.placeholder((4, 8), name="x")
    y = te.compute((4, 8), lambda i, j: x[i, j] + 1, name="y")
    assert topi.x86.anchor_tag(topi.nn.relu(y)) is None
