"""TVMScript's ``@T.prim_func`` / ``@I.ir_module`` subset parsed into loop IR."""

# TVMScript's annotations (T.Buffer(...), T.int32) are values, not Python types; and a class
# under @I.ir_module is an IRModule, which type checkers cannot see through a class decorator.
# mypy: disable-error-code="valid-type, misc"

from __future__ import annotations

import numpy as np
import pytest

import pytvm
from pytvm import tir
from pytvm.ffi.errors import DiagnosticError
from pytvm.script import ir as I
from pytvm.script import tir as T_018
from pytvm.script import tirx as T

N = 8


@T.prim_func
def scale_and_clip(A: T.Buffer((N,), "float32"), B: T.Buffer((N,), "float32"), k: T.int32) -> None:
    """Doc strings are skipped."""
    for i in range(N):
        x = A[i] * T.float32(k)
        if i < 4:
            B[i] = min(x, 10.0)
        else:
            B[i] = x if x > 0.0 else -x


@T.prim_func
def grid_sum(A: T.Buffer((2, 3), "int32"), B: T.Buffer((2,), "int32")) -> None:
    for i in T.serial(2):
        B[i] = 0
    for i, j in T.grid(2, 3):
        B[i] += A[i, j] * 2 // 1


def test_prim_func_becomes_loop_ir() -> None:
    assert scale_and_clip.name == "scale_and_clip"
    assert [p.dtype for p in scale_and_clip.params] == ["handle", "handle", "int32"]
    buffers = list(scale_and_clip.buffer_map.values())
    assert [(b.name, b.dtype, [int(str(s)) for s in b.shape]) for b in buffers] == [
        ("A", "float32", [N]),
        ("B", "float32", [N]),
    ]
    loop = scale_and_clip.body
    assert isinstance(loop, tir.For)
    assert str(loop.extent) == str(N)
    assert isinstance(loop.body, tir.LetStmt)


def test_grid_is_nested_loops() -> None:
    assert isinstance(grid_sum.body, tir.SeqStmt)
    first, second = grid_sum.body.seq
    assert isinstance(first, tir.For) and isinstance(second, tir.For)
    assert isinstance(second.body, tir.For)
    assert (second.loop_var.name, second.body.loop_var.name) == ("i", "j")


@pytest.mark.needs_cc
@pytest.mark.parametrize("target", ["llvm", "c"])
def test_parsed_functions_compile_and_run(target: str) -> None:
    built = pytvm.compile(scale_and_clip, target=target)
    a = pytvm.nd.array(np.array([-3, -1, 1, 3, -5, 5, -7, 7], "float32"))
    b = pytvm.nd.array(np.zeros(N, "float32"))
    built["scale_and_clip"](a, b, 4)
    x = a.numpy() * 4
    np.testing.assert_allclose(b.numpy(), np.where(np.arange(N) < 4, np.minimum(x, 10), abs(x)))
    summed = pytvm.compile(grid_sum, target=target)
    a2 = pytvm.nd.array(np.arange(6, dtype="int32").reshape(2, 3))
    b2 = pytvm.nd.array(np.zeros(2, "int32"))
    summed["grid_sum"](a2, b2)
    np.testing.assert_array_equal(b2.numpy(), a2.numpy().sum(axis=1) * 2)


def test_ir_module_collects_prim_funcs_by_name() -> None:
    @I.ir_module
    class Module:
        @T.prim_func
        def first(A: T.Buffer((4,), "int32")) -> None:
            for i in range(4):
                A[i] = i

        @T.prim_func(private=True)
        def helper(A: T.Buffer((4,), "int32")) -> None:
            A[0] = 1

        not_a_function = 3

    assert isinstance(Module, tir.IRModule)
    assert sorted(Module) == ["first", "helper"]
    assert Module["first"].attrs["global_symbol"] == "first"
    assert "global_symbol" not in Module["helper"].attrs


def test_return_is_tvm_ret_and_the_compiled_function_returns_it() -> None:
    @I.ir_module
    class Module:
        @T.prim_func(s_tir=True)
        def func_with_arg(unused: T.int64) -> T.int64:
            return T.int64(42)

    body = Module["func_with_arg"].body
    assert isinstance(body, tir.Evaluate)
    assert isinstance(body.value, tir.Call)
    assert (body.value.op, body.value.dtype) == ("tir.ret", "int64")
    assert pytvm.compile(Module, target="llvm")["func_with_arg"](7) == 42


def test_tir_is_the_0_18_spelling_of_tirx() -> None:
    assert T_018.prim_func is T.prim_func
    assert T_018.int32 is T.int32


def _line_of(func: object, text: str) -> int:
    import inspect

    lines, first = inspect.getsourcelines(func)  # type: ignore[arg-type]
    return first + next(i for i, line in enumerate(lines) if text in line)


def test_constructs_outside_the_subset_name_the_line() -> None:
    def while_loop(A: T.Buffer((4,), "int32")) -> None:
        while A[0] < 3:  # the construct
            A[0] = A[0] + 1

    with pytest.raises(DiagnosticError) as err:
        T.prim_func(while_loop)
    line = _line_of(while_loop, "# the construct")
    assert f"test_parser.py:{line}: statement While" in str(err.value)
    assert "outside pytvm's TVMScript subset" in str(err.value)

    def bad_store(A: T.Buffer((4,), "float32"), n: T.int32) -> None:
        A[0] = n

    with pytest.raises(DiagnosticError, match=r"store of a int32 value into float32 buffer A"):
        T.prim_func(bad_store)

    def unannotated(A) -> None:  # type: ignore[no-untyped-def]  # noqa: ANN001
        A[0] = 1

    with pytest.raises(DiagnosticError, match=r"parameter 'A' without a T\.<dtype> or T\.Buffer"):
        T.prim_func(unannotated)

    def unknown_call(A: T.Buffer((4,), "float32")) -> None:
        A[0] = print(1)

    with pytest.raises(DiagnosticError, match=r"call 'print\(1\)'"):
        T.prim_func(unknown_call)
