"""scatter_nd and scatter_elements with every combining mode, against numpy loops."""

from __future__ import annotations

import numpy as np
import pytest

import pytvm as tvm
from pytvm import te, topi
from pytvm.ffi.errors import TVMValueError

MODES = ["update", "add", "mul", "min", "max"]


def _combine(old: float, new: float, mode: str) -> float:
    return {"update": new, "add": old + new, "mul": old * new, "min": min(old, new)}.get(
        mode, max(old, new)
    )


def _run(
    out_t: object, ins: list[object], arrays: list[np.ndarray], shape: tuple[int, ...]
) -> np.ndarray:
    f = tvm.build(te.create_schedule(out_t.op), [*ins, out_t], "llvm")  # type: ignore[attr-defined]
    out = tvm.nd.array(np.zeros(shape, arrays[0].dtype))
    f(*[tvm.nd.array(a) for a in arrays], out)
    return out.numpy()


@pytest.mark.parametrize("mode", MODES)
def test_scatter_nd_combines_repeated_indices_in_order(mode: str) -> None:
    data = np.random.uniform(size=(2, 4, 3))
    indices = np.array([[1, 0, 1, 1], [2, 3, 2, 0]], "int64")
    updates = np.random.uniform(size=(4, 3))
    want = data.copy()
    for y in range(4):
        for x in range(3):
            at = (indices[0, y], indices[1, y], x)
            want[at] = _combine(want[at], updates[y, x], mode)
    D, I, U = (te.placeholder(a.shape, str(a.dtype)) for a in (data, indices, updates))  # noqa: E741
    got = _run(topi.scatter_nd(D, I, U, mode), [D, I, U], [data, indices, updates], data.shape)
    np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("mode", MODES)
def test_scatter_elements_along_an_axis(mode: str) -> None:
    data = np.random.uniform(size=(3, 5))
    indices = np.array([[1, -1], [0, 4], [3, 1]], "int64")  # smaller than data, negative index
    updates = np.random.uniform(size=(3, 2))
    want = data.copy()
    for p in np.ndindex(*indices.shape):
        at = (p[0], indices[p] % 5)
        want[at] = _combine(want[at], float(updates[p]), mode)
    D, I, U = (te.placeholder(a.shape, str(a.dtype)) for a in (data, indices, updates))  # noqa: E741
    got = _run(
        topi.scatter_elements(D, I, U, 1, mode), [D, I, U], [data, indices, updates], data.shape
    )
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_scatter_refuses_an_unknown_mode() -> None:
    D, I, U = te.placeholder((2, 2)), te.placeholder((1, 2), "int64"), te.placeholder((2, 2))  # noqa: E741
    with pytest.raises(TVMValueError, match="scatter_nd: bad mode 'sub'"):
        topi.scatter_nd(D, I, U, "sub")
