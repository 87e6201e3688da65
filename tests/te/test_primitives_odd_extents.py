"""Every schedule primitive on extents its factors do not divide (13 x 7, factors 4 and 3),
compiled with the C compiler and compared with numpy; then a stage read by two consumers,
computed at one of them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import pytvm
from pytvm import te

pytestmark = pytest.mark.needs_cc

M, N, K = 13, 7, 5


def _ewise() -> tuple[te.Tensor, te.Tensor]:
    A = te.placeholder((M, N), name="A")
    B = te.compute((M, N), lambda i, j: A[i, j] * 2.0 + 1.0, name="B")
    return A, B


def _check_ewise(s: Any, A: te.Tensor, B: te.Tensor) -> None:
    f = pytvm.build(s, [A, B], target="c", name="f")
    a = np.random.default_rng(0).random((M, N), dtype=np.float32)
    b = pytvm.nd.empty((M, N), "float32")
    f["f"](pytvm.nd.array(a), b)
    np.testing.assert_allclose(b.numpy(), a * 2 + 1, rtol=1e-6)


def _split_factor(s: Any, B: te.Tensor) -> None:
    s[B].split(B.op.axis[0], factor=4)


def _split_nparts(s: Any, B: te.Tensor) -> None:
    s[B].split(B.op.axis[1], nparts=3)


def _tile(s: Any, B: te.Tensor) -> None:
    s[B].tile(B.op.axis[0], B.op.axis[1], 4, 3)


def _reorder(s: Any, B: te.Tensor) -> None:
    i, j = B.op.axis
    jo, ji = s[B].split(j, factor=3)
    s[B].reorder(jo, i, ji)


def _fuse(s: Any, B: te.Tensor) -> None:
    fused = s[B].fuse(*B.op.axis)
    s[B].split(fused, factor=4)


def _vectorize(s: Any, B: te.Tensor) -> None:
    _, ji = s[B].split(B.op.axis[1], factor=4)
    s[B].vectorize(ji)


def _parallel(s: Any, B: te.Tensor) -> None:
    io, _ = s[B].split(B.op.axis[0], factor=4)
    s[B].parallel(io)


def _unroll(s: Any, B: te.Tensor) -> None:
    _, ii = s[B].split(B.op.axis[0], factor=4)
    s[B].unroll(ii)


def _pragma(s: Any, B: te.Tensor) -> None:
    io, _ = s[B].split(B.op.axis[0], factor=4)
    s[B].pragma(io, "unroll_explicit", 2)


@pytest.mark.parametrize(
    "schedule",
    [_split_factor, _split_nparts, _tile, _reorder, _fuse, _vectorize, _parallel, _unroll, _pragma],
    ids=lambda f: f.__name__.strip("_"),
)
def test_loop_primitive_on_odd_extents(schedule: Callable[[Any, te.Tensor], None]) -> None:
    A, B = _ewise()
    s = te.create_schedule(B.op)
    schedule(s, B)
    _check_ewise(s, A, B)


def _chain() -> tuple[te.Tensor, te.Tensor, te.Tensor]:
    A = te.placeholder((M, N), name="A")
    T = te.compute((M, N), lambda i, j: A[i, j] + 1.0, name="T")
    C = te.compute((M, N), lambda i, j: T[i, j] * 3.0, name="C")
    return A, T, C


def _check_chain(s: Any, A: te.Tensor, C: te.Tensor) -> None:
    f = pytvm.build(s, [A, C], target="c", name="g")
    a = np.random.default_rng(1).random((M, N), dtype=np.float32)
    c = pytvm.nd.empty((M, N), "float32")
    f["g"](pytvm.nd.array(a), c)
    np.testing.assert_allclose(c.numpy(), (a + 1) * 3, rtol=1e-6)


def test_compute_inline_compute_at_and_compute_root_on_odd_tiles() -> None:
    for place in ("inline", "at", "root"):
        A, T, C = _chain()
        s = te.create_schedule(C.op)
        io, _ = s[C].split(C.op.axis[0], factor=4)
        if place == "inline":
            s[T].compute_inline()
        elif place == "at":
            s[T].compute_at(s[C], io)
        else:
            s[T].compute_at(s[C], io)
            s[T].compute_root()
        _check_chain(s, A, C)


def test_cache_read_cache_write_and_storage_align_on_odd_tiles() -> None:
    k = te.reduce_axis((0, K), name="k")
    A = te.placeholder((M, K), name="A")
    W = te.placeholder((K, N), name="W")
    C = te.compute((M, N), lambda i, j: te.sum(A[i, k] * W[k, j], axis=k), name="C")
    s = te.create_schedule(C.op)
    AL = s.cache_read(A, "local", [C])
    CL = s.cache_write(C, "local")
    _, jo, _, _ = s[C].tile(C.op.axis[0], C.op.axis[1], 4, 3)
    s[CL].compute_at(s[C], jo)
    s[AL].compute_at(s[CL], s[CL].op.reduce_axis[0])
    s[AL].storage_align(s[AL].op.axis[0], 4, 1)
    f = pytvm.build(s, [A, W, C], target="c", name="mm")
    rng = np.random.default_rng(2)
    a, w = rng.random((M, K), dtype=np.float32), rng.random((K, N), dtype=np.float32)
    c = pytvm.nd.empty((M, N), "float32")
    f["mm"](pytvm.nd.array(a), pytvm.nd.array(w), c)
    np.testing.assert_allclose(c.numpy(), a @ w, rtol=1e-5)


def test_a_stage_read_by_two_consumers_computed_at_one_of_them() -> None:
    A = te.placeholder((M, N), name="A")
    T = te.compute((M, N), lambda i, j: A[i, j] * 2.0, name="T")
    U = te.compute((M, N), lambda i, j: T[i, j] + 1.0, name="U")
    V = te.compute((M, N), lambda i, j: T[i, j] - U[i, j], name="V")
    s = te.create_schedule(V.op)
    io, _ = s[V].split(V.op.axis[0], factor=4)
    s[U].compute_at(s[V], io)
    s[T].compute_at(s[V], io)  # T feeds U (computed at io too) and V: the region covers both
    f = pytvm.build(s, [A, V], target="c", name="two")
    a = np.random.default_rng(3).random((M, N), dtype=np.float32)
    v = pytvm.nd.empty((M, N), "float32")
    f["two"](pytvm.nd.array(a), v)
    np.testing.assert_allclose(v.numpy(), a * 2 - (a * 2 + 1), rtol=1e-6)
