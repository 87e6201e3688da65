"""``pytvm.ir``: TVM's ``tvm.ir`` names over the loop IR (``IRModule`` with its attributes,
structural equality and hashing, ``ir.transform``).
"""

from __future__ import annotations

import pytest

import pytvm
from pytvm import ir, te, tir
from pytvm.ffi.errors import TVMValueError


def _add_one(name: str | None = None) -> tir.PrimFunc:
    a = te.placeholder((8,), name="A")
    b = te.compute(a.shape, lambda i: a[i] + 1.0, name="B")
    func = te.create_prim_func([a, b])
    return func if name is None else func.with_attr("global_symbol", name)


def test_ir_names_are_the_loop_irs() -> None:
    assert pytvm.ir is ir
    assert ir.IRModule is tir.IRModule
    assert ir.structural_equal(tir.IntImm("int32", 1), tir.IntImm("int32", 1))
    assert ir.PrimExpr is tir.PrimExpr and ir.Range is tir.Range
    assert ir.transform.PassContext is pytvm.transform.PassContext


def test_from_expr_files_the_function_under_its_global_symbol() -> None:
    mod = ir.IRModule.from_expr(_add_one("myadd"))
    assert list(mod) == ["myadd"]
    assert mod["myadd"].attrs["global_symbol"] == "myadd"
    assert list(ir.IRModule.from_expr(_add_one())) == ["main"]  # TVM's name without one


def test_from_expr_keeps_the_functions_given_beside_it() -> None:
    helper = _add_one("helper")
    mod = ir.IRModule.from_expr(_add_one("myadd"), {"helper": helper})
    assert sorted(mod) == ["helper", "myadd"] and mod["helper"] is helper


def test_from_expr_and_the_constructor_refuse_what_is_no_prim_func() -> None:
    with pytest.raises(TVMValueError, match="expects a PrimFunc, got int"):
        ir.IRModule.from_expr(3)  # type: ignore[arg-type]
    with pytest.raises(TVMValueError, match="function 'f' is a str, expected a PrimFunc"):
        ir.IRModule({"f": "not a function"})  # type: ignore[dict-item]


def test_with_attr_returns_a_copy_with_the_attribute() -> None:
    mod = ir.IRModule.from_expr(_add_one("myadd"))
    lib = mod.with_attr("system_lib_prefix", "")
    assert lib.attrs == {"system_lib_prefix": ""} and lib.get_attr("system_lib_prefix") == ""
    assert mod.attrs == {} and mod.get_attr("system_lib_prefix") is None  # the input unchanged
    assert lib["myadd"] is mod["myadd"]
    assert lib.without_attr("system_lib_prefix").attrs == {}


def test_editing_a_module_keeps_its_attributes() -> None:
    mod = ir.IRModule.from_expr(_add_one("myadd")).with_attr("note", 1)
    assert mod.with_function(_add_one("other")).attrs == {"note": 1}
    assert mod.map_functions(lambda f: f).attrs == {"note": 1}
    assert pytvm.lower(mod).attrs == {"note": 1}  # through the pass pipeline


def test_structural_equality_compares_functions_and_attributes() -> None:
    func = _add_one("myadd")
    mod = ir.IRModule.from_expr(func)
    twin = ir.IRModule.from_expr(_add_one("myadd"))
    assert ir.structural_equal(mod, twin)
    assert ir.structural_hash(mod) == ir.structural_hash(twin)
    ir.assert_structural_equal(mod, twin)
    assert not ir.structural_equal(mod, mod.with_attr("system_lib_prefix", ""))
    with pytest.raises(ValueError, match="differs structurally"):
        ir.assert_structural_equal(mod, ir.IRModule.from_expr(_add_one("other")))


def test_pass_context_of_ir_transform_configures_passes() -> None:
    with ir.transform.PassContext(opt_level=2, config={"tir.disable_vectorize": True}):
        ctx = ir.transform.PassContext.current()
        assert ctx.opt_level == 2 and ctx.get("tir.disable_vectorize") is True
