"""``te.scan``: the recurrence lowered to a loop over the scan axis, its body computed per
step, several states, and the scan graph analyses (body, fixed points, attach paths).
"""

from __future__ import annotations

import numpy as np

import pytvm
from pytvm import te
from pytvm.te.scan import ScanOp
from pytvm.tir.expr import IntImm, PrimExpr


def _value(e: PrimExpr) -> int:
    assert isinstance(e, IntImm)
    return int(e.value)


def test_cumulative_sum_scan_runs() -> None:
    m, n = te.var("m"), te.var("n")
    X = te.placeholder((m, n), name="X")
    state = te.placeholder((m, n), name="state")
    init = te.compute((1, n), lambda _, i: X[0, i], name="init")
    update = te.compute((m, n), lambda t, i: state[t - 1, i] + X[t, i], name="update")
    res = te.scan(init, update, state)
    assert isinstance(res, te.Tensor) and isinstance(res.op, ScanOp)
    s = te.create_schedule(res.op)
    bounds = te.schedule.InferBound(s)
    assert _value(bounds[res.op.scan_axis].min) == 1
    f = pytvm.build(s, [X, res], target="llvm")
    x = np.random.uniform(size=(6, 3)).astype("float32")
    out = pytvm.nd.empty((6, 3))
    f(pytvm.nd.array(x), out)
    np.testing.assert_allclose(out.numpy(), np.cumsum(x, axis=0), rtol=1e-5)


def test_two_states_with_a_body_stage_per_step() -> None:
    m, n = 5, 4
    X = te.placeholder((m, n), name="X")
    s1 = te.placeholder((m, n), name="s1")
    s2 = te.placeholder((m, n), name="s2")
    init1 = te.compute((1, n), lambda _, i: X[0, i], name="init1")
    init2 = te.compute((1, n), lambda _, i: X[0, i] * 0.0, name="init2")
    mid = te.compute((m, n), lambda t, i: s1[t - 1, i] * 2.0, name="mid")
    up1 = te.compute((m, n), lambda t, i: mid[t, i] + X[t, i], name="up1")
    up2 = te.compute((m, n), lambda t, i: s2[t - 1, i] + s1[t - 1, i], name="up2")
    outs = te.scan([init1, init2], [up1, up2], [s1, s2], inputs=[X])
    assert isinstance(outs, list)
    r1, r2 = outs
    body = te.schedule.ScanGetBody(r1.op)
    assert {op.name for op in body} == {"mid", "up1", "up2"}
    s = te.create_schedule(r1.op)
    s[mid].compute_inline()
    f = pytvm.build(s, [X, r1, r2], target="llvm")
    x = np.random.uniform(size=(m, n)).astype("float32")
    e1, e2 = np.zeros_like(x), np.zeros_like(x)
    e1[0] = x[0]
    for t in range(1, m):
        e1[t] = e1[t - 1] * 2 + x[t]
        e2[t] = e2[t - 1] + e1[t - 1]
    o1, o2 = pytvm.nd.empty((m, n)), pytvm.nd.empty((m, n))
    f(pytvm.nd.array(x), o1, o2)
    np.testing.assert_allclose(o1.numpy(), e1, rtol=1e-5)
    np.testing.assert_allclose(o2.numpy(), e2, rtol=1e-5)


def test_fix_point_analysis_and_attach_path() -> None:
    m, n = te.var("m"), te.var("n")
    x = te.compute((m, n), lambda i, j: pytvm.tir.const(1, "float32"), name="x")
    state = te.placeholder((m, n))
    init = te.compute((1, n), lambda _, i: x[0, i], name="init")
    same = te.compute((m, n), lambda t, i: state[t - 1, i] + x[t, i], name="same")
    res = te.scan(init, same, state)
    assert isinstance(res, te.Tensor) and isinstance(res.op, ScanOp)
    fxpt = te.schedule.ScanFixPointAnalysis(res.op)
    assert _value(fxpt[res.op.spatial_axis_[0]]) == 1
    shifted = te.compute((m, n), lambda t, i: state[t - 1, n - 1 - i], name="shifted")
    res2 = te.scan(init, shifted, state)
    assert isinstance(res2, te.Tensor) and isinstance(res2.op, ScanOp)
    assert _value(te.schedule.ScanFixPointAnalysis(res2.op)[res2.op.spatial_axis_[0]]) == 0
    s = te.create_schedule(res.op)
    path = te.schedule.CreateAttachPath(s)
    assert tuple(path[same.op]) == (res.op.scan_axis,)
