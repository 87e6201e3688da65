"""autotvm.feature: loop ("itervar") features, curve features and knob features of real
schedules, lowered by pytvm: hand-checked touch statistics of a small matmul, annotations,
fixed lengths across the configurations of TVM's ``conv2d_NCHWc.x86`` template, determinism,
names.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from pytvm import autotvm, te
from pytvm.autotvm import feature
from pytvm.autotvm._touch_extractor import ANNOTATIONS, index_strides
from pytvm.autotvm.task.space import ConfigSpace
from pytvm.autotvm.task.task import TASK_TABLE, deserialize_args
from pytvm.ffi.errors import TVMValueError
from pytvm.target import Target
from pytvm.testing.autotvm import conv2d_nchwc_args
from pytvm.tir.expr import Var

_CONV = "conv2d_NCHWc.x86"
_CONV_ARGS = conv2d_nchwc_args(4, 14, padding=(1, 1, 1, 1))


def _conv(config: Any) -> tuple[Any, list[Any]]:
    import pytvm.topi.x86  # noqa: F401 - registers the template

    with Target("llvm"), autotvm.ApplyConfig(config):
        data, kernel, *rest = deserialize_args(_CONV_ARGS)
        out = TASK_TABLE[_CONV]["compute"](data, kernel, *rest)
        return TASK_TABLE[_CONV]["schedule"]([out]), [data, kernel, out]


@pytest.fixture(scope="module")
def conv_space() -> ConfigSpace:
    space = ConfigSpace()
    _conv(space)
    return space


def _matmul() -> tuple[Any, list[Any]]:
    """C[i, j] = sum_k A[i, k] * B[k, j]; loops i 16, j 8 (vectorized), k 4."""
    a = te.placeholder((16, 4), name="A")
    b = te.placeholder((4, 8), name="B")
    k = te.reduce_axis((0, 4), name="k")
    c = te.compute((16, 8), lambda i, j: te.sum(a[i, k] * b[k, j], axis=k), name="C")
    s = te.create_schedule(c.op)
    i, j = s[c].op.axis
    s[c].reorder(i, k, j)
    s[c].vectorize(j)
    s[c].parallel(i)
    return s, [a, b, c]


def _row(fea: list[Any], name: str, nth: int = 0) -> dict[str, list[float]]:
    rows = [r for r in fea if r[0][1] == name]
    return {pair[0]: list(pair[1:]) for pair in rows[nth][1:]}


def test_matmul_touch_statistics_match_hand_counts() -> None:
    fea = feature.get_itervar_feature(*_matmul())
    assert [r[0][1] for r in fea] == ["i", "j", "k", "j"]  # i { j: init; k { j: update } }
    outer = _row(fea, "i")
    # under i (16) x k (4) x j (8): A moves with i and k, B with k and j, C with i and j
    assert outer["A_0"][:4] == [4.0, -1.0, 64.0, 8.0]  # stride, mod, count, reuse
    assert outer["B_0"][:4] == [0.0, -1.0, 32.0, 16.0]
    assert outer["C_1"][:4] == [8.0, -1.0, 128.0, 4.0]
    inner = _row(fea, "j", 1)
    assert inner["B_0"][:4] == [1.0, -1.0, 8.0, 1.0]
    assert inner["A_0"][:4] == [0.0, -1.0, 1.0, 8.0]
    assert inner["_arith_"] == [1.0, 1.0, 0.0]  # one float add, one float multiply
    assert outer["_attr_"][0:4] == [16.0, 1, 16.0, 512.0]  # length, nest, topdown, bottomup
    one_hot = dict(zip(feature.get_flatten_name(fea)[4:15], outer["_attr_"][4:], strict=True))
    assert [n.rsplit(".", 1)[-1] for n, v in one_hot.items() if v] == ["ann_parallel"]
    assert _row(fea, "j", 1)["_attr_"][4:] == [float(a == "vec") for a in ANNOTATIONS]


def test_parallel_loop_gets_thread_count_and_reuse_of_its_serial_body() -> None:
    fea = feature.get_itervar_feature(*_matmul())
    outer = _row(fea, "i")
    # the serial nest inside i touches A 4 times with reuse 8: count 64 / 4, reuse 8 / 8
    assert outer["A_0"][4:] == [16.0, 1.0]


def test_take_log_is_log2_of_one_plus() -> None:
    raw = feature.get_itervar_feature(*_matmul())
    logged = feature.get_itervar_feature(*_matmul(), take_log=True)
    assert _row(logged, "i")["A_0"][2] == pytest.approx(np.log2(65.0))
    assert _row(logged, "i")["A_0"][1] == pytest.approx(-1.0)  # -log2(1 + 1)
    assert _row(raw, "i")["_attr_"][1] == _row(logged, "i")["_attr_"][1]  # nest level


def test_index_strides_take_one_for_a_variable_under_division() -> None:
    i, j = Var("i"), Var("j")
    assert index_strides((i // 4) * 8 + j * 3 - j) == {i: 8, j: 2}


def test_flatten_has_fixed_length_and_is_deterministic(conv_space: ConfigSpace) -> None:
    picks = [0, 36, 72, 180, 287]
    vecs = [feature.get_itervar_feature_flatten(*_conv(conv_space.get(i))) for i in picks]
    assert {v.shape for v in vecs} == {(feature.FLATTEN_LENGTH,)}
    assert all(v.dtype == np.float32 for v in vecs)
    again = feature.get_itervar_feature_flatten(*_conv(conv_space.get(180)))
    np.testing.assert_array_equal(vecs[3], again)
    # tile_ow changes the loops: 0 and 36 differ only in tile_ow
    assert not np.array_equal(vecs[0], vecs[1])


def test_flatten_names_cover_every_entry(conv_space: ConfigSpace) -> None:
    fea = feature.get_itervar_feature(*_conv(conv_space.get(0)))
    names = feature.get_flatten_name(fea)
    assert len(names) == feature.FLATTEN_LENGTH == len(set(names))
    assert names[0] == f"f0.{fea[0][0][1]}._attr_.length"
    assert names[-1].endswith(f"._site{feature.TOUCH_SLOTS - 1}_.T_reuse")
    flat = feature.flatten_itervar_feature(fea)
    site = fea[1][3][0]  # the second loop's first access site: its count
    width = feature.FLATTEN_LENGTH // feature.ITERVAR_SLOTS
    k = names.index(f"f{width + 15 + 3 + 2}.{fea[1][0][1]}.{site}.count")
    assert flat[k] == fea[1][3][3]


def test_flatten_rejects_rows_that_are_not_features() -> None:
    with pytest.raises(TVMValueError, match="get_itervar_feature's rows"):
        feature.flatten_itervar_feature([[["_itervar_", "i"], ["oops", 1.0]]])


def test_curve_feature_has_fixed_length(conv_space: ConfigSpace) -> None:
    a = feature.get_buffer_curve_sample_flatten(*_conv(conv_space.get(0)), sample_n=10)
    b = feature.get_buffer_curve_sample_flatten(*_conv(conv_space.get(36)), sample_n=10)
    assert a.shape == b.shape == (feature.TOUCH_SLOTS * 4 * 10 * 2,)
    assert np.all(np.isfinite(a)) and np.any(a != 0)
    with pytest.raises(TVMValueError, match="sample_n"):
        feature.get_buffer_curve_sample_flatten(*_matmul(), sample_n=0)


def test_config_feature_lists_the_knob_values(conv_space: ConfigSpace) -> None:
    cfg = conv_space.get(180)  # tile_ow [-1, 2], unroll_kw False (see the space)
    fea = feature.get_config_feature(cfg)
    sizes = [v for k in ("tile_ic", "tile_oc", "tile_ow") for v in cfg[k].size]
    assert fea.tolist() == [*map(float, sizes), 0.0]
    assert feature.other_option_feature(cfg).tolist() == [0.0]


def test_flatten_names_of_a_log_line_name_its_kernel() -> None:
    import time

    import pytvm.topi.x86  # noqa: F401 - registers the template
    from pytvm.autotvm.measure import MeasureInput, MeasureResult
    from pytvm.autotvm.record import encode

    task = autotvm.task.create(_CONV, _CONV_ARGS, "llvm")
    config = task.config_space.get(180)
    line = encode(
        MeasureInput(task.target, task, config), MeasureResult((1e-3,), 0, 0.0, time.time())
    )
    fea = feature.get_itervar_feature(*_conv(config))
    assert feature.get_flatten_name(line) == feature.get_flatten_name(fea)
    with pytest.raises(TVMValueError, match="not an autotvm JSON record"):
        feature.get_flatten_name("")
