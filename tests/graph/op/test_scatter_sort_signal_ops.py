"""Bitwise, scatter, sorting, ``dft`` and ``trilu`` graph operators: the interpreter (each
operator's numpy reference) and the compiled C kernels agree with numpy.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from pytvm.testing.graph_ops import OpCase, build_cases, interpret_case, run_compiled

RNG = np.random.default_rng(5)
A = RNG.integers(-100, 100, (3, 4)).astype("int16")
B = RNG.integers(-100, 100, (4,)).astype("int16")
D = RNG.standard_normal((4, 3)).astype("float32")
IDX = np.array([[1, 0, 3], [2, 2, 0]], dtype="int64")
UPD = RNG.standard_normal((2, 3)).astype("float32")
ND_IDX = np.array([[0, 3, 3], [1, 2, 2]], dtype="int64")  # [M=2, 3 updates]
ND_UPD = RNG.standard_normal((3,)).astype("float32")
TIES = RNG.integers(0, 3, (3, 6)).astype("float32")
SIG = RNG.standard_normal((2, 8)).astype("float32")


def _scatter_elements(d: np.ndarray, i: np.ndarray, u: np.ndarray, mode: str) -> np.ndarray:
    out = d.copy()
    for r, c in np.ndindex(*i.shape):
        at = (int(i[r, c]), c)
        out[at] = u[r, c] if mode == "update" else out[at] + u[r, c]
    return out


def _scatter_nd_add(d: np.ndarray, i: np.ndarray, u: np.ndarray) -> np.ndarray:
    out = d.copy()
    np.add.at(out, (i[0], i[1]), u)
    return out


def _topk(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    order = np.argsort(-x, axis=1, kind="stable")[:, :4]
    return np.take_along_axis(x, order, axis=1), order.astype("int64")


def _dft(re: np.ndarray, im: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    y = np.fft.ifft(re + 1j * im, axis=-1)
    return y.real.astype("float32"), y.imag.astype("float32")


CASES: list[OpCase] = [
    OpCase("bitwise_and", "bitwise_and", [A, B], expected=np.bitwise_and),
    OpCase("bitwise_or", "bitwise_or", [A, B], expected=np.bitwise_or),
    OpCase("bitwise_xor", "bitwise_xor", [A, B], expected=np.bitwise_xor),
    OpCase("bitwise_not", "bitwise_not", [A], expected=np.invert),
    OpCase(
        "right_shift", "right_shift", [A, np.array([1, 2, 3, 4], "int16")], expected=np.right_shift
    ),
    OpCase(
        "scatter_elements",
        "scatter_elements",
        [D, IDX, UPD],
        {"axis": 0, "reduction": "update"},
        expected=lambda d, i, u: _scatter_elements(d, i, u, "update"),
    ),
    OpCase(
        "scatter_elements_add",
        "scatter_elements",
        [D, IDX, UPD],
        {"axis": 0, "reduction": "add"},
        expected=lambda d, i, u: _scatter_elements(d, i, u, "add"),
    ),
    OpCase(
        "scatter_nd_add",
        "scatter_nd",
        [D, ND_IDX, ND_UPD],
        {"mode": "add"},
        expected=_scatter_nd_add,
    ),
    OpCase(
        "topk",
        "topk",
        [TIES],
        {"k": 4, "axis": 1, "ret_type": "both", "is_ascend": False, "dtype": "int64"},
        expected=_topk,
    ),
    OpCase("sort", "sort", [TIES], {"axis": 0}, expected=lambda x: np.sort(x, axis=0)),
    OpCase(
        "argsort_desc",
        "argsort",
        [TIES],
        {"axis": 1, "is_ascend": False, "dtype": "int32"},
        expected=lambda x: np.argsort(-x, axis=1, kind="stable").astype("int32"),
    ),
    OpCase("dft_inverse", "dft", [SIG, SIG[::-1].copy()], {"inverse": True}, expected=_dft),
    OpCase(
        "trilu_upper",
        "trilu",
        [D, np.array(-1, "int64")],
        {"upper": True},
        expected=lambda d, k: np.triu(d, -1),
    ),
    OpCase(
        "trilu_lower",
        "trilu",
        [D, np.array(1, "int64")],
        {"upper": False},
        expected=lambda d, k: np.tril(d, 1),
    ),
]
IDS = [c.name for c in CASES]
#: ``run_compiled`` passes inputs through ``np.ascontiguousarray``, which makes a 0-d array 1-d:
#: ``trilu``'s 0-d ``k`` is compiled and run in tests/frontend/test_onnx_triangle.py instead.
COMPILED = [c for c in CASES if all(np.ndim(x) for x in c.inputs)]


def _check(got: Any, case: OpCase) -> None:
    want = case.want()
    if isinstance(want, tuple):
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@pytest.fixture(scope="module")
def built() -> tuple[Any, dict[str, BaseException]]:
    return build_cases(COMPILED)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_interpreter_matches_numpy(case: OpCase) -> None:
    _check(interpret_case(case), case)


@pytest.mark.needs_cc
@pytest.mark.parametrize("case", COMPILED, ids=[c.name for c in COMPILED])
def test_compiled_kernel_matches_numpy(case: OpCase, built: tuple[Any, Any]) -> None:
    mod, errors = built
    if case.name in errors:
        raise errors[case.name]
    _check(run_compiled(mod, case), case)
