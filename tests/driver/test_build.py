"""``pytvm.build``/``lower``/``compile``: sources, the compile cache, export and reload, targets."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pytvm
from pytvm import te
from pytvm.driver import CompiledModule, compile_stats
from pytvm.target import Target

pytestmark = pytest.mark.needs_cc


def _add_one() -> tuple[te.Schedule, list[te.Tensor]]:
    A = te.placeholder((16,), name="A")
    B = te.compute((16,), lambda i: A[i] + 1.0, name="B")
    return te.create_schedule(B.op), [A, B]


def test_an_unchanged_kernel_is_not_compiled_again(tmp_path: Path) -> None:
    s, args = _add_one()
    before = (compile_stats().compiled, compile_stats().cached)
    first = pytvm.build(s, args, name="add_one", cache_dir=tmp_path)
    second = pytvm.build(s, args, name="add_one", cache_dir=tmp_path)
    assert compile_stats().compiled == before[0] + 1
    assert compile_stats().cached == before[1] + 1
    assert isinstance(first, CompiledModule) and isinstance(second, CompiledModule)
    assert first.path == second.path
    assert first.get_source().startswith("// pytvm target: c")
    assert "TVM_DLL int32_t add_one(TVMValue* args" in first.get_source()


def test_export_library_and_load_module_round_trip(tmp_path: Path) -> None:
    s, args = _add_one()
    mod = pytvm.build(s, args, target="llvm -backend=c", name="add_one")
    path = tmp_path / "add_one.so"
    mod.export_library(path)
    loaded = pytvm.runtime.load_module(path)
    a = pytvm.nd.array(np.arange(16, dtype="float32"))
    b = pytvm.nd.empty((16,), "float32")
    loaded["add_one"](a, b)
    np.testing.assert_array_equal(b.numpy(), np.arange(16, dtype="float32") + 1)
    timing = loaded.time_evaluator("add_one", pytvm.cpu(), number=10, repeat=2)(a, b)
    assert len(timing.results) == 2
    mod.save(tmp_path / "add_one.c")
    assert (tmp_path / "add_one.c").read_text() == mod.get_source()


def test_tvm_spelling_compile_create_prim_func_and_main_entry() -> None:
    _, (A, B) = _add_one()
    lib = pytvm.compile(te.create_prim_func([A, B]), target="llvm")
    a = pytvm.nd.array(np.zeros(16, dtype="float32"))
    b = pytvm.nd.empty((16,), "float32")
    lib["main"](a, b)
    lib(a, b)
    assert b.numpy().tolist() == [1.0] * 16


def test_lower_prints_loop_ir() -> None:
    s, args = _add_one()
    text = str(pytvm.lower(s, args, name="add_one"))
    assert text.startswith("primfn(A_1: handle, B_1: handle) -> ()")
    assert "B[i] = (A[i] + 1.0f32)" in text


def test_target_strings() -> None:
    t = Target("c -mcpu=native --system-lib")
    assert (t.kind.name, t.mcpu, t.system_lib) == ("c", "native", True)
    assert Target("llvm").vector_lanes("float32") in (4, 8, 16)
    assert Target("c -mattr=+avx2").vector_lanes("float32") == 8
    assert Target("c -mattr=+avx512f").vector_lanes("float32") == 16
    with Target("llvm") as outer:
        assert Target.current() is outer
    with pytest.raises(ValueError, match="unknown target kind 'tpu'"):
        Target("tpu")
    with pytest.raises(ValueError, match="unknown option '-foo'"):
        Target("c -foo")


def test_build_refuses_what_it_cannot_compile() -> None:
    with pytest.raises(TypeError, match=r"expects a te\.Schedule, a PrimFunc or an IRModule"):
        pytvm.build("not a schedule")
    s, _ = _add_one()
    with pytest.raises(ValueError, match="a schedule needs args"):
        pytvm.build(s)


def _add_one_module() -> pytvm.ir.IRModule:
    A = te.placeholder((16,), name="A")
    B = te.compute((16,), lambda i: A[i] + 1.0, name="B")
    return pytvm.ir.IRModule.from_expr(te.create_prim_func([A, B]).with_attr("global_symbol", "f"))


def test_system_lib_prefix_asks_for_a_system_library() -> None:
    built = pytvm.compile(_add_one_module().with_attr("system_lib_prefix", ""), "llvm")
    assert isinstance(built, CompiledModule) and Target(built.target).system_lib
    assert "TVMSystemLibEntryPoint" in built.get_source()
    plain = pytvm.compile(_add_one_module(), "c")
    assert "TVMSystemLibEntryPoint" not in plain.get_source()


def test_a_system_lib_prefix_other_than_empty_is_refused() -> None:
    with pytest.raises(ValueError, match="use system_lib_prefix=''"):
        pytvm.compile(_add_one_module().with_attr("system_lib_prefix", "mod_"), "llvm")
    with pytest.raises(ValueError, match="system libraries and cross targets build through C"):
        pytvm.compile(
            _add_one_module().with_attr("system_lib_prefix", ""), "llvm -backend=llvmlite"
        )
