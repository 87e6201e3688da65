"""Hybrid operations compile (their statement bound to the real buffers) and dump back to a
script (``te.hybrid.build``) that emulates and parses like the original.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pytvm
from pytvm import te
from pytvm.ffi.errors import TVMValueError
from pytvm.te.hybrid import HybridModule, script
from pytvm.te.hybrid.runtime import allocate, bind, output_tensor, vectorize


@script
def blur(a: Any) -> Any:
    b = output_tensor((6,), "float32")
    for i in range(6):
        s = 0.0
        for j in range(3):
            s += a[i + j]
        b[i] = s / 3.0
    return b


@script
def sums(a: Any) -> Any:
    total = output_tensor((1,), a.dtype)
    twice = output_tensor(a.shape, a.dtype)
    total[0] = 0.0
    for i in range(a.shape[0]):
        total[0] += a[i]
        twice[i] = a[i] + a[i]
    return total, twice


def _run(sch: Any, args: list[Any], inputs: list[Any]) -> list[Any]:
    f = pytvm.build(sch, args, target="llvm")
    nd = [pytvm.nd.array(x) for x in inputs]
    outs = [pytvm.nd.array(np.zeros([int(d) for d in t.shape], t.dtype)) for t in args[len(nd) :]]
    f(*nd, *outs)
    return [o.numpy() for o in outs]


def test_compiled_script_matches_emulation() -> None:
    a = te.placeholder((8,), name="a")
    b = blur(a)
    data = np.random.uniform(size=8).astype("float32")
    (got,) = _run(te.create_schedule(b.op), [a, b], [data])
    np.testing.assert_allclose(got, blur(data), rtol=1e-6)


def test_scripts_chain_with_computes() -> None:
    a = te.placeholder((5,), name="a")
    c = te.compute((5,), lambda i: a[i] * 2.0, name="c")
    total, twice = sums(c)
    d = te.compute((5,), lambda i: twice[i] + total[0], name="d")
    data = np.arange(5, dtype="float32")
    (got,) = _run(te.create_schedule(d.op), [a, d], [data])
    np.testing.assert_allclose(got, 4 * data + 2 * data.sum())


def test_calling_a_script_inlines_it() -> None:
    @script
    def outer(a: Any) -> Any:
        t, w = sums(a)
        out = output_tensor((3,), a.dtype)
        for i in range(3):
            out[i] = w[i] * t[0]
        return out

    a = te.placeholder((3,), name="a")
    out = outer(a)
    assert out.op.inputs == (a,)
    data = np.array([1, 2, 3], "float32")
    (got,) = _run(te.create_schedule(out.op), [a, out], [data])
    np.testing.assert_allclose(got, outer(data))
    np.testing.assert_allclose(got, 2 * data * 6)


def test_scratch_allocations_and_vector_loops() -> None:
    @script
    def staged(a: Any) -> Any:
        b = output_tensor((4, 4), a.dtype)
        for i in range(4):
            row = allocate((4,), a.dtype, "local")
            for j in vectorize(4):
                row[j] = a[i, j] * 3.0
            for j in range(4):
                b[i, j] = row[3 - j]
        return b

    a = te.placeholder((4, 4), name="a")
    b = staged(a)
    data = np.random.uniform(size=(4, 4)).astype("float32")
    (got,) = _run(te.create_schedule(b.op), [a, b], [data])
    np.testing.assert_allclose(got, staged(data), rtol=1e-6)


def test_build_dumps_a_script_that_round_trips() -> None:
    n = te.size_var("n")
    a = te.placeholder((n,), name="a")
    total, twice = sums(a)
    mod = te.hybrid.build(te.create_schedule(total.op), [n, a], [total, twice])
    assert isinstance(mod, HybridModule)
    assert mod.name == "hybrid_func"
    src = mod.get_source()
    assert src is not None and "def hybrid_func(n, a):" in src and "output_tensor" in src
    data = np.arange(4, dtype="float32")
    got_total, got_twice = mod(4, data)
    np.testing.assert_allclose(got_total, [6.0])
    np.testing.assert_allclose(got_twice, 2 * data)
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "saved")
        mod.save(path)
        loaded = HybridModule()
        loaded.load(path + ".py")
    assert loaded.name == "hybrid_func" and loaded.get_source() == src
    again = loaded(n, a)
    assert isinstance(again, list) and isinstance(again[0].op, te.HybridOp)
    f = pytvm.build(te.create_schedule(again[1].op), [n, a, *again], target="llvm")
    got_total, got_twice = pytvm.nd.empty((1,)), pytvm.nd.empty((4,))
    f(4, pytvm.nd.array(data), got_total, got_twice)
    np.testing.assert_allclose(got_total.numpy(), [6.0])
    np.testing.assert_allclose(got_twice.numpy(), 2 * data)


def test_gpu_thread_binding_is_refused_on_cpu() -> None:
    @script
    def threaded(a: Any) -> Any:
        b = output_tensor((8,), a.dtype)
        for t in bind("threadIdx.x", 8):
            b[t] = a[t]
        return b

    a = te.placeholder((8,), name="a")
    b = threaded(a)
    np.testing.assert_allclose(threaded(np.ones(8, "float32")), np.ones(8))
    with pytest.raises(TVMValueError, match=r"threadIdx\.x.*parallel"):
        pytvm.lower(te.create_schedule(b.op), [a, b])


@script
def outer(a: Any, b: Any) -> Any:
    c = output_tensor((8, 8), a.dtype)
    for i in range(8):
        for j in range(8):
            c[i, j] = a[i] * b[j]
    return c


def test_scheduled_loops_are_rebuilt() -> None:
    a, b = te.placeholder((8,), name="a"), te.placeholder((8,), name="b")
    c = outer(a, b)
    s = te.create_schedule(c.op)
    i, j = c.op.axis
    io, ii = s[c].split(i, 3)
    s[c].reorder(j, io, ii)
    s[c].parallel(j)
    body = pytvm.lower(s, [a, b, c])["main"].body
    assert isinstance(body, pytvm.tir.AttrStmt) and body.key == "extern_scope"
    loop = body.body
    assert isinstance(loop, pytvm.tir.For) and loop.loop_var.name == "j"
    assert loop.kind is pytvm.tir.ForKind.PARALLEL
    x, y = np.arange(8, dtype="float32"), np.arange(8, 16, dtype="float32")
    (got,) = _run(s, [a, b, c], [x, y])
    np.testing.assert_allclose(got, np.outer(x, y))


def test_scheduling_needs_one_perfect_nest() -> None:
    @script
    def two_nests(a: Any) -> Any:
        b = output_tensor((4,), a.dtype)
        for i in range(4):
            b[i] = a[i]
        for k in range(4):
            b[k] = b[k] * 2.0
        return b

    a = te.placeholder((4,), name="a")
    b = two_nests(a)
    s = te.create_schedule(b.op)
    s[b].split(b.op.axis[0], 2)
    with pytest.raises(TVMValueError, match="not one perfect nest"):
        pytvm.lower(s, [a, b])


def test_nothing_can_be_computed_at_a_hybrid_loop() -> None:
    a = te.placeholder((8,), name="a")
    a2 = te.compute((8,), lambda i: a[i] + 1.0, name="a2")
    c = outer(a2, a)
    s = te.create_schedule(c.op)
    s[a2].compute_at(s[c], c.op.axis[0])
    with pytest.raises(TVMValueError, match="does not read it"):
        pytvm.lower(s, [a, c])


def test_inlined_inputs_are_substituted_into_the_script() -> None:
    a = te.placeholder((8,), name="a")
    c = te.compute((8,), lambda x: a[x] + 1.0, name="c")
    d = outer(c, c)
    s = te.create_schedule(d.op)
    s[c].compute_inline()
    x = np.arange(8, dtype="float32")
    (got,) = _run(s, [a, d], [x])
    np.testing.assert_allclose(got, np.outer(x + 1, x + 1))
