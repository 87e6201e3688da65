"""Configuration spaces: knobs collected by a space, points of a space, fallback defaults and
the JSON form a record stores.
"""

from __future__ import annotations

import pytest

from pytvm import te
from pytvm.autotvm.task.space import (
    ConfigEntity,
    ConfigSpace,
    FallbackConfigEntity,
    OtherOptionEntity,
    SplitEntity,
    SplitSpace,
    get_factors,
    get_pow2s,
)
from pytvm.ffi.errors import TVMIndexError, TVMValueError


def test_factors_and_powers_of_two() -> None:
    assert get_factors(36) == [1, 2, 3, 4, 6, 9, 12, 18, 36]
    assert get_factors(1) == [1]
    assert get_pow2s(9) == [1, 2, 4, 8]


def test_split_space_factors_have_no_tail() -> None:
    cfg = ConfigSpace()
    cfg.define_split("tile", 12, num_outputs=2)
    sizes = [cfg.space_map["tile"][i].size for i in range(len(cfg.space_map["tile"]))]
    assert sizes == [[-1, f] for f in get_factors(12)]


def test_split_space_power2_allows_a_tail() -> None:
    cfg = ConfigSpace()
    cfg.define_split("tile", 12, policy="power2", num_outputs=2)
    assert [e.size[1] for e in cfg.space_map["tile"].entities] == [1, 2, 4, 8]


def test_space_length_is_the_product_and_points_enumerate_knobs() -> None:
    cfg = ConfigSpace()
    cfg.define_split("x", 8, num_outputs=2)  # 4 sizes
    cfg.define_knob("unroll", [0, 1, 2])
    cfg.define_annotate("ann", [cfg.axis(4), cfg.axis(4)], "try_unroll_vec")  # 8 (one vec)
    assert len(cfg) == 4 * 3 * 8
    point = cfg.get(5)
    assert point["x"].size == [-1, 2] and point["unroll"].val == 1
    with pytest.raises(TVMIndexError):
        cfg.get(len(cfg))


def test_axis_reads_an_itervar_extent() -> None:
    A = te.placeholder((6, 10), name="A")
    B = te.compute((6, 10), lambda i, j: A[i, j] + 1, name="B")
    cfg = ConfigSpace()
    cfg.define_split("y", B.op.axis[1], num_outputs=2)
    space = cfg.space_map["y"]
    assert isinstance(space, SplitSpace) and space.product == 10


def test_entity_splits_and_reorders_a_stage() -> None:
    A = te.placeholder((16, 8), name="A")
    B = te.compute((16, 8), lambda i, j: A[i, j] * 2, name="B")
    s = te.create_schedule(B.op)
    outer, inner = SplitEntity([-1, 4]).apply(s, B, B.op.axis[0])
    s[B].reorder(inner, outer)
    assert len(s[B].leaf_iter_vars) == 3


def test_fallback_split_takes_the_largest_fitting_factors() -> None:
    cfg = FallbackConfigEntity()
    cfg.define_split("t", 49, num_outputs=3)
    cfg.fallback_split("t", [-1, 8, 4])
    assert cfg["t"].size == [7, 7, 1]
    with pytest.raises(TVMValueError):
        cfg.fallback_split("t", [-1, 8])


def test_fallback_keeps_a_knob_set_before_it_is_declared() -> None:
    cfg = FallbackConfigEntity()
    cfg["tile_ow"] = SplitEntity([2, 7])
    cfg.define_split("tile_ow", 14, num_outputs=2)
    assert cfg["tile_ow"].size == [2, 7]
    assert cfg.is_fallback


def test_config_entity_round_trips_through_json() -> None:
    cfg = ConfigSpace()
    cfg.define_split("x", 16, num_outputs=3)
    cfg.define_reorder("r", [cfg.axis(2), cfg.axis(3)], "all")
    cfg.define_knob("k", [True, False])
    point = cfg.get(len(cfg) - 1)
    again = ConfigEntity.from_json_dict(point.to_json_dict())
    assert repr(again) == repr(point)
    assert again.get_other_option() == {"k": False}
    assert isinstance(again["k"], OtherOptionEntity)


def test_declaring_on_an_entity_does_not_change_it() -> None:
    cfg = ConfigSpace()
    cfg.define_knob("k", [1, 2])
    point = cfg.get(1)
    axes = point.define_split("x", 8, num_outputs=2)
    assert len(axes) == 2 and "x" not in point.space_map
    assert point["k"].val == 2


def test_bad_policy_and_unknown_knob_are_errors() -> None:
    cfg = ConfigSpace()
    with pytest.raises(TVMValueError, match="policy"):
        cfg.define_split("x", 8, policy="nope", num_outputs=2)
    with pytest.raises(TVMValueError, match="GPU"):
        cfg.define_annotate("a", [cfg.axis(2)], "bind_gpu")
    with pytest.raises(TVMValueError, match="no knob"):
        cfg["missing"]
