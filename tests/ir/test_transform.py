"""``pytvm.ir.transform``: pass records, ``PassContext`` and running passes in order."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest

from pytvm import tir
from pytvm.ffi.errors import TVMTypeError, TVMValueError
from pytvm.ir.transform import Pass, PassContext, sequential
from pytvm.tir.transform import PIPELINE, Simplify, lower_pipeline

S, V = tir.ForKind.SERIAL, tir.ForKind.VECTORIZED


@pytest.fixture(autouse=True)
def _verify_every_pass() -> Iterator[None]:
    with PassContext(config={"tir.verify": True}):
        yield


def _module() -> tuple[tir.IRModule, tir.Var]:
    A = tir.decl_buffer((4, 8), "float32", "A")
    io, ii = tir.Var("io"), tir.Var("ii")
    body = tir.For(io, tir.const(0), tir.const(4), S, tir.For(ii, tir.const(0), tir.const(8), V,
                   tir.BufferStore(A, A.vload((io, ii)) + 1.0, (io, ii))))  # fmt: skip
    func = tir.PrimFunc((A.data,), body, {A.data: A}, {"global_symbol": "f"})
    return tir.IRModule.from_expr(func), io


def test_opt_level_and_disabled_pass() -> None:
    mod, _ = _module()
    level1 = lower_pipeline(mod, PassContext(opt_level=1, config={"tir.verify": True}))
    assert "ramp(" in str(level1)  # the level-0 passes all ran
    off = PassContext(disabled_pass=("vectorize_loop",), config={"tir.verify": True})
    assert "vectorized" in str(lower_pipeline(mod, off))
    assert "vectorized" not in str(lower_pipeline(mod))


def test_verify_names_the_pass_that_broke_the_ir() -> None:
    mod, _ = _module()

    def drop_loop(m: tir.IRModule, ctx: PassContext) -> tir.IRModule:
        del ctx
        func = m["f"]
        return m.with_function(func.with_body(func.body.body))  # type: ignore[attr-defined]  # io unbound

    broken = Pass("drop_loop", 0, drop_loop)
    with pytest.raises(TVMValueError, match=r"function f: variable io .*after pass drop_loop"):
        sequential((broken,), mod, PassContext(config={"tir.verify": True}))


def test_pass_is_pure_and_tvm_spelling_works() -> None:
    mod, _ = _module()
    before = str(mod)
    for p in PIPELINE:
        assert isinstance(p(mod), tir.IRModule)
        assert str(mod) == before, p.name  # the input is never changed
    assert isinstance(Simplify()(mod), tir.IRModule)  # TVM's spelling
    with pytest.raises(TVMValueError, match="needs"):
        sequential([dataclasses.replace(Simplify, required=("nothing",))], mod)


def test_pass_context_rejects_bad_level() -> None:
    with pytest.raises(TVMValueError, match="opt_level"):
        PassContext(opt_level=9)
    assert PassContext.current().verify  # tests run with tir.verify on


def test_pass_rejects_a_non_module() -> None:
    with pytest.raises(TVMTypeError, match=r"IRModule\.from_expr"):
        Simplify(_module()[0]["f"])  # type: ignore[call-overload]


def test_current_context_nests() -> None:
    outer = PassContext(opt_level=3)
    with outer, PassContext(opt_level=1) as inner:
        assert PassContext.current() is inner
    assert PassContext.current() is not outer
