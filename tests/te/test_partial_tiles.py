"""Stages computed at another stage's loop on extents the tiles do not divide: the edge tiles
compute only points that exist (no read past an input), and lowering terminates.
"""

from __future__ import annotations

import numpy as np
import pytest

import pytvm
from pytvm import te

pytestmark = pytest.mark.needs_cc


def _matmul(m: int, n: int, k_extent: int) -> tuple[te.Tensor, te.Tensor, te.Tensor]:
    k = te.reduce_axis((0, k_extent), name="k")
    A = te.placeholder((m, k_extent), name="A")
    B = te.placeholder((k_extent, n), name="B")
    C = te.compute((m, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return A, B, C


def _check(mod: pytvm.runtime.Module, name: str, m: int, n: int, k: int) -> None:
    rng = np.random.default_rng(0)
    a, b = rng.random((m, k), dtype=np.float32), rng.random((k, n), dtype=np.float32)
    c = pytvm.nd.empty((m, n), "float32")
    mod[name](pytvm.nd.array(a), pytvm.nd.array(b), c)
    np.testing.assert_allclose(c.numpy(), a @ b, rtol=1e-4)


def test_cache_write_tile_at_the_edges_stays_in_bounds() -> None:
    A, B, C = _matmul(37, 45, 29)
    s = te.create_schedule(C.op)
    CC = s.cache_write(C, "local")
    _, yo, _, yi = s[C].tile(C.op.axis[0], C.op.axis[1], 8, 16)
    s[CC].compute_at(s[C], yo)
    xc, yc = s[CC].op.axis
    ko, ki = s[CC].split(s[CC].op.reduce_axis[0], factor=4)
    s[CC].reorder(ko, xc, ki, yc)
    s[CC].vectorize(yc)
    s[C].vectorize(yi)
    lowered = te.lower_schedule(s, [A, B, C], "tiled")
    text = str(lowered)
    assert "likely" in text and "< 37" in text and "< 45" in text  # edge tiles are guarded
    _check(pytvm.build(s, [A, B, C], name="tiled"), "tiled", 37, 45, 29)


def test_cached_panel_computed_at_a_loop_with_a_vectorized_tail() -> None:
    A, B, C = _matmul(64, 80, 96)
    s = te.create_schedule(C.op)
    BB = s.cache_read(B, "global", [C.op])
    io, ii = s[C].split(C.op.axis[0], factor=8)
    jo, ji = s[C].split(C.op.axis[1], factor=32)
    s[C].reorder(jo, io, C.op.reduce_axis[0], ii, ji)
    s[BB].compute_at(s[C], jo)
    s[C].unroll(ii)
    s[C].vectorize(ji)
    _check(pytvm.build(s, [A, B, C], name="panel"), "panel", 64, 80, 96)
