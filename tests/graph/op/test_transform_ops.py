"""Layout, indexing and reduction operators: the interpreter and the compiled kernels agree
with numpy (negative axes, clamped and reversed slices, negative gather indices, padding
modes, ties in arg-reductions, tuples in and out).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from pytvm.testing.graph_ops import OpCase, build_cases, interpret_case, run_compiled

RNG = np.random.default_rng(5)


def _f(*shape: int) -> np.ndarray:
    return RNG.uniform(-2, 2, shape).astype("float32")


X = _f(2, 3, 4)
Y = _f(2, 5, 4)
M = _f(4, 6)
T = np.array([[3, 1, 3, 0], [2, 2, 1, 2]], "float32")  # ties for the arg-reductions
IDX = np.array([[0, -1], [2, 1]], "int64")


def _pad(x: np.ndarray, mode: str, **kw: Any) -> np.ndarray:
    return np.pad(x, ((0, 0), (1, 2), (2, 1)), mode=mode, **kw)  # type: ignore[call-overload,no-any-return]


CASES: list[OpCase] = [
    OpCase("reshape", "reshape", [X], {"newshape": (4, -1)}, expected=lambda x: x.reshape(4, 6)),
    OpCase(
        "transpose", "transpose", [X], {"axes": (2, 0, 1)}, expected=lambda x: x.transpose(2, 0, 1)
    ),
    OpCase("transpose_default_reverses", "transpose", [X], expected=lambda x: x.T),
    OpCase(
        "concatenate",
        "concatenate",
        [[X, Y]],
        {"axis": -2},
        expected=lambda xs: np.concatenate(xs, axis=1),
    ),
    OpCase(
        "split_sections",
        "split",
        [Y],
        {"indices_or_sections": (1, 3), "axis": 1},
        expected=lambda y: tuple(np.split(y, [1, 3], axis=1)),
    ),
    OpCase(
        "split_equal",
        "split",
        [M],
        {"indices_or_sections": 3, "axis": -1},
        expected=lambda m: tuple(np.split(m, 3, axis=1)),
    ),
    OpCase("squeeze", "squeeze", [_f(1, 3, 1)], {"axis": (-1,)}, expected=lambda x: x[..., 0]),
    OpCase("squeeze_all", "squeeze", [_f(1, 3, 1)], expected=np.squeeze),
    OpCase(
        "expand_dims",
        "expand_dims",
        [M],
        {"axis": -1, "num_newaxis": 2},
        expected=lambda m: m[:, :, None, None],
    ),
    OpCase(
        "broadcast_to",
        "broadcast_to",
        [_f(3, 1)],
        {"shape": (2, 3, 4)},
        expected=lambda x: np.broadcast_to(x, (2, 3, 4)),
    ),
    OpCase("tile", "tile", [M], {"reps": (2, 1, 2)}, expected=lambda m: np.tile(m, (2, 1, 2))),
    OpCase(
        "strided_slice",
        "strided_slice",
        [X],
        {"begin": (1, 0), "end": (3, 100), "strides": (1, 2), "axes": (1, 2)},
        expected=lambda x: x[:, 1:3, 0:100:2],
    ),
    OpCase(
        "strided_slice_reversed",
        "strided_slice",
        [M],
        {"begin": (-1,), "end": (-(2**62),), "strides": (-2,), "axes": (1,)},
        expected=lambda m: m[:, ::-2],
    ),
    OpCase(
        "take_negative_indices",
        "take",
        [M, IDX],
        {"axis": 1, "mode": "wrap"},
        expected=lambda m, i: np.take(m, i, axis=1, mode="wrap"),
    ),
    OpCase(
        "take_flat",
        "take",
        [M, np.array([0, 23, 7], "int32")],
        {"mode": "fast"},
        expected=lambda m, i: m.ravel()[i],
    ),
    OpCase(
        "where",
        "where",
        [M > 0, M, _f(6)],
        expected=np.where,
    ),
    OpCase(
        "pad_constant",
        "nn.pad",
        [X],
        {"pad_width": ((0, 0), (1, 2), (2, 1)), "pad_value": 1.5},
        expected=lambda x: _pad(x, "constant", constant_values=1.5),
    ),
    OpCase(
        "pad_reflect",
        "nn.pad",
        [X],
        {"pad_width": ((0, 0), (1, 2), (2, 1)), "pad_mode": "reflect"},
        expected=lambda x: _pad(x, "reflect"),
    ),
    OpCase(
        "pad_edge",
        "nn.pad",
        [X],
        {"pad_width": ((0, 0), (1, 2), (2, 1)), "pad_mode": "edge"},
        expected=lambda x: _pad(x, "edge"),
    ),
    OpCase("sum", "sum", [X], {"axis": (0, -1)}, expected=lambda x: x.sum(axis=(0, 2))),
    OpCase(
        "sum_all_keepdims", "sum", [X], {"keepdims": True}, expected=lambda x: x.sum(keepdims=True)
    ),
    OpCase(
        "sum_exclude",
        "sum",
        [X],
        {"axis": (1,), "exclude": True},
        expected=lambda x: x.sum(axis=(0, 2)),
    ),
    OpCase(
        "mean",
        "mean",
        [X],
        {"axis": (1,), "keepdims": True},
        expected=lambda x: x.mean(1, keepdims=True),
    ),
    OpCase("max", "max", [X], {"axis": (2,)}, expected=lambda x: x.max(2)),
    OpCase("min", "min", [X], {"axis": (-2,)}, expected=lambda x: x.min(1)),
    OpCase("prod", "prod", [X], {"axis": (1,)}, expected=lambda x: x.prod(1)),
    OpCase(
        "sum_int",
        "sum",
        [np.arange(12, dtype="int32").reshape(3, 4)],
        {"axis": (1,)},
        expected=lambda x: x.sum(1).astype("int32"),
    ),
    OpCase(
        "argmax_first_tie",
        "argmax",
        [T],
        {"axis": (1,)},
        expected=lambda t: np.argmax(t, 1).astype("int32"),
    ),
    OpCase(
        "argmax_last_tie",
        "argmax",
        [T],
        {"axis": (1,), "keepdims": True, "select_last_index": True},
        expected=lambda t: np.array([[2], [3]], "int32"),
    ),
    OpCase(
        "argmin", "argmin", [T], {"axis": (0,)}, expected=lambda t: np.argmin(t, 0).astype("int32")
    ),
    OpCase(
        "gather_elements",
        "gather",
        [M[:2], np.array([[0, -1, 2, 5, 1, 0], [3, 3, -6, 0, 1, 2]], "int64")],
        {"axis": 1},
        expected=lambda m, i: np.take_along_axis(m, np.where(i < 0, i + 6, i), axis=1),
    ),
    OpCase(
        "gather_nd",
        "gather_nd",
        [X, np.array([[1, -1], [0, 2], [1, 0]], "int64")],
        expected=lambda x, i: np.stack([x[1, 2], x[0, 2], x[1, 0]]),
    ),
    OpCase(
        "gather_nd_batched",
        "gather_nd",
        [X, np.array([[[2]], [[0]]], "int32")],
        {"batch_dims": 1},
        expected=lambda x, i: np.stack([x[0, 2], x[1, 0]])[:, None],
    ),
    OpCase("cumsum", "cumsum", [X], {"axis": 1}, expected=lambda x: np.cumsum(x, axis=1)),
    OpCase(
        "cumsum_exclusive_reverse",
        "cumsum",
        [np.arange(12, dtype="int64").reshape(3, 4)],
        {"axis": -1, "exclusive": True, "reverse": True},
        expected=lambda x: np.flip(np.cumsum(np.flip(x, 1), 1), 1) - x,
    ),
]
IDS = [c.name for c in CASES]


def _check(got: Any, case: OpCase) -> None:
    want = case.want()
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for a, b in zip(got, want, strict=True):
            np.testing.assert_allclose(a, b, rtol=case.rtol, atol=case.atol)
        return
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=case.rtol, atol=case.atol)


@pytest.fixture(scope="module")
def built() -> tuple[Any, dict[str, BaseException]]:
    return build_cases(CASES)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_interpreter_matches_numpy(case: OpCase) -> None:
    _check(interpret_case(case), case)


@pytest.mark.needs_cc
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_compiled_kernel_matches_numpy(case: OpCase, built: tuple[Any, Any]) -> None:
    mod, errors = built
    if case.name in errors:
        raise errors[case.name]
    _check(run_compiled(mod, case), case)
