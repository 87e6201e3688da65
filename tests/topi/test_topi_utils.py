"""topi.utils (constants out of shapes, index arithmetic, layout shapes) and topi.nn.utils
(padding from a convolution's attribute, padding and stride read back from stages).
"""

from __future__ import annotations

import numpy as np
import pytest

from pytvm import te, tir, topi
from pytvm.ffi.errors import TVMValueError
from pytvm.target import Target
from pytvm.testing.te_eval import evaluate
from pytvm.topi.nn.utils import (
    get_pad_tuple,
    get_pad_tuple1d,
    get_pad_tuple3d,
    get_pad_tuple_generic,
    infer_pad,
    infer_pad3d,
    infer_stride,
)
from pytvm.topi.utils import (
    InvalidShapeError,
    ceil_div,
    const_vector,
    equal_const_int,
    get_const_int,
    get_const_tuple,
    get_float_tuple,
    get_shape,
    is_empty_shape,
    is_target,
    nchw_xc_layout,
    prod,
    ravel_index,
    simplify,
    swap,
    traverse_inline,
    unravel_index,
)


def test_get_const_tuple_folds_constants_and_keeps_variables() -> None:
    n = te.var("n")
    x = te.placeholder((2, 3 + 1, n), name="x")
    assert get_const_tuple(x.shape)[:2] == (2, 4)
    assert get_const_tuple(x.shape)[2] is n
    assert get_const_tuple((tir.const(3) * 2, 5)) == (6, 5)


def test_get_const_int_and_float() -> None:
    assert get_const_int(tir.const(2) + 3) == 5
    assert get_const_int(7) == 7
    assert get_float_tuple((tir.const(1.5, "float32"), 2.0)) == (1.5, 2.0)
    assert equal_const_int(tir.const(4) - 1, 3)
    assert not equal_const_int(te.var("m"), 3)
    with pytest.raises(TVMValueError, match="constant int"):
        get_const_int(te.var("m"))


def test_get_shape_permutes_axes_between_layouts() -> None:
    assert get_shape((1, 3, 224, 224), "NCHW", "NHWC") == (1, 224, 224, 3)
    assert get_shape((3, 2, 32, 48, 16), "NCHW16c", "NC16cWH") == (3, 2, 16, 48, 32)
    assert get_shape((2, 3, 32, 32, 16, 8), "OIHW16i8o", "HWO8oI16i") == (32, 32, 2, 8, 3, 16)
    with pytest.raises(TVMValueError, match="same axes"):
        get_shape((1, 3, 4, 4), "NCHW", "NCHW4c")


def test_index_helpers_round_trip() -> None:
    shape = (3, 4, 5)
    flat = ravel_index((2, 1, 3), shape)
    assert flat == 2 * 20 + 1 * 5 + 3
    i = te.var("i")
    coords = unravel_index(i, shape)
    assert [simplify(tir.substitute(c, {i: tir.const(flat)})).value for c in coords] == [2, 1, 3]
    assert ceil_div(7, 2) == 4
    assert prod([2, 3, 4]) == 24
    assert swap([0, 1, 2, 3], 1) == [0, 3, 2, 1]
    assert is_empty_shape((2, 0, 3)) and not is_empty_shape((2, 3))
    assert nchw_xc_layout("NCHW8c") and not nchw_xc_layout("NCHW")
    assert issubclass(InvalidShapeError, ValueError)


def test_const_vector_holds_the_values() -> None:
    vec = np.array([3.0, -1.0, 2.5], dtype="float32")
    (got,) = evaluate(const_vector(vec), {})
    np.testing.assert_array_equal(got, vec)


def test_traverse_inline_inlines_injective_stages() -> None:
    x = te.placeholder((4, 4), name="x")
    y = topi.exp(x)
    z = topi.sum(y, axis=1)
    s = te.create_schedule([z.op])
    seen: list[str] = []
    traverse_inline(s, z.op, lambda op: seen.append(op.name))
    assert seen[-1] == z.op.name
    assert y.op.name not in seen  # reached only through the reduction, which stops the walk


@pytest.mark.parametrize(
    ("padding", "kernel", "expected"),
    [
        (1, (3, 3), (1, 1, 1, 1)),
        ((1, 2), (3, 3), (1, 2, 1, 2)),
        ((1, 2, 3, 4), (3, 3), (1, 2, 3, 4)),
        ("VALID", (3, 3), (0, 0, 0, 0)),
        ("SAME", (4, 3), (2, 1, 1, 1)),
    ],
)
def test_get_pad_tuple(padding: object, kernel: tuple[int, int], expected: tuple[int, ...]) -> None:
    assert get_pad_tuple(padding, kernel) == expected


def test_get_pad_tuple_1d_3d_and_generic() -> None:
    assert get_pad_tuple1d("SAME", (4,)) == (2, 1)
    assert get_pad_tuple1d((1, 3), (3,)) == (1, 3)
    assert get_pad_tuple3d(1, (3, 3, 3)) == (1, 1, 1, 1, 1, 1)
    assert get_pad_tuple3d("SAME", (2, 3, 4)) == (1, 1, 2, 0, 1, 1)
    assert get_pad_tuple_generic((1, 2), (3, 3)) == [[1, 2], [1, 2]]
    assert get_pad_tuple_generic((1, 2, 3, 4), (3, 3)) == [[1, 2], [3, 4]]
    with pytest.raises(TVMValueError, match="expected 2 or 4"):
        get_pad_tuple((1, 2, 3), (3, 3))
    with pytest.raises(TVMValueError, match="unknown padding"):
        get_pad_tuple("FULL", (3, 3))


def test_infer_pad_and_stride_from_stages() -> None:
    data = te.placeholder((1, 3, 8, 8), name="data")
    padded = topi.nn.pad(data, (0, 0, 1, 2), (0, 0, 1, 2))
    assert infer_pad(data, padded) == (1, 2)
    assert infer_pad(data, None) == (0, 0)
    kernel = te.placeholder((4, 3, 3, 3), name="kernel")
    out = topi.nn.conv2d_nchw(data, kernel, 2, 0, 1)
    assert infer_stride(data, kernel, out) == (2, 2)
    d3 = te.placeholder((1, 4, 4, 4, 2), name="d3")
    p3 = topi.nn.pad(d3, (0, 1, 0, 2, 0), (0, 1, 0, 0, 0))
    assert infer_pad3d(d3, p3, "NDHWC") == (2, 0, 2)
    with pytest.raises(TVMValueError, match="not supported"):
        infer_pad3d(d3, p3, "DHWNC")


def test_is_target_reads_the_current_target_keys() -> None:
    with Target("llvm"):
        assert is_target("cpu") and is_target(["gpu", "cpu"]) and not is_target("cuda")
