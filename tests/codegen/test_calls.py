"""Kernels calling out: packed functions (``tir.call_packed``) and C functions
(``tir.call_extern``), in both code generators, compiled and run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, cast

import numpy as np
import pytest

import pytvm as tvm
from pytvm import te

TARGETS = ["c", "llvm"]


@pytest.fixture
def registered() -> Iterator[list[str]]:
    """Names registered by a test, removed after it."""
    names: list[str] = []
    yield names
    for name in names:
        tvm.ffi.registry.remove_global_func(name)


def _register(names: list[str], name: str, func: Callable[..., Any]) -> None:
    tvm.register_func(name, func, override=True)
    names.append(name)


@pytest.mark.parametrize("target", TARGETS)
def test_buffers_reach_a_packed_function_as_arrays(target: str, registered: list[str]) -> None:
    seen: list[tuple[tuple[int, ...], str]] = []

    def scale(x: tvm.nd.NDArray, y: tvm.nd.NDArray, out: tvm.nd.NDArray) -> None:
        seen.append((x.shape, x.dtype))
        out.copyfrom(x.numpy() * y.numpy())

    _register(registered, "test_calls.scale", scale)
    A = te.placeholder((3, 4), name="A")
    B = te.placeholder((1,), name="B")
    C = te.extern(
        A.shape,
        [A, B],
        lambda ins, outs: tvm.tir.call_packed("test_calls.scale", ins[0], ins[1], outs[0]),
        name="C",
    )
    assert isinstance(C, te.Tensor)
    f = tvm.build(te.create_schedule(C.op), [A, B, C], target)
    a = np.random.uniform(size=(3, 4)).astype("float32")
    b = np.array([2.5], "float32")
    c = tvm.nd.array(np.zeros((3, 4), "float32"))
    f(tvm.nd.array(a), tvm.nd.array(b), c)
    np.testing.assert_allclose(c.numpy(), a * b)
    assert seen == [((3, 4), "float32")]


@pytest.mark.parametrize("target", TARGETS)
def test_scalars_and_strings_are_packed_values(target: str, registered: list[str]) -> None:
    got: list[object] = []
    _register(registered, "test_calls.record", lambda *args: got.extend(args))
    n = te.var("n")
    A = te.placeholder((n,), name="A")
    B = te.extern(
        (n,),
        [A],
        lambda ins, outs: tvm.tir.call_packed(
            "test_calls.record", ins[0].shape[0], 1.5, "text", ins[0].shape[0] * 2
        ),
        name="B",
    )
    assert isinstance(B, te.Tensor)
    f = tvm.build(te.create_schedule(B.op), [A, B], target)
    f(tvm.nd.array(np.zeros(5, "float32")), tvm.nd.array(np.zeros(5, "float32")))
    assert got == [5, 1.5, "text", 10]


@pytest.mark.parametrize("target", TARGETS)
def test_an_exception_in_the_callee_reaches_the_caller(target: str, registered: list[str]) -> None:
    def fail(x: tvm.nd.NDArray) -> None:
        raise ValueError("the callee refuses")

    _register(registered, "test_calls.fail", fail)
    A = te.placeholder((2,), name="A")
    B = te.extern((2,), [A], lambda ins, outs: tvm.tir.call_packed("test_calls.fail", outs[0]))
    assert isinstance(B, te.Tensor)
    f = tvm.build(te.create_schedule(B.op), [A, B], target)
    with pytest.raises(ValueError, match="the callee refuses"):
        f(tvm.nd.array(np.zeros(2, "float32")), tvm.nd.array(np.zeros(2, "float32")))


@pytest.mark.parametrize("target", TARGETS)
def test_a_missing_packed_function_is_named(target: str) -> None:
    A = te.placeholder((2,), name="A")
    B = te.extern((2,), [A], lambda ins, outs: tvm.tir.call_packed("test_calls.nowhere", outs[0]))
    assert isinstance(B, te.Tensor)
    f = tvm.build(te.create_schedule(B.op), [A, B], target)
    with pytest.raises(Exception, match=r"test_calls\.nowhere"):
        f(tvm.nd.array(np.zeros(2, "float32")), tvm.nd.array(np.zeros(2, "float32")))


@pytest.mark.parametrize("target", TARGETS)
def test_the_packed_result_is_the_call_value(target: str, registered: list[str]) -> None:
    _register(registered, "test_calls.square", lambda i: i * i)
    B = te.compute((6,), lambda i: tvm.tir.call_packed("test_calls.square", i), name="B")
    assert isinstance(B, te.Tensor)
    f = tvm.build(te.create_schedule(B.op), [B], target)
    b = tvm.nd.array(np.zeros(6, "int32"))
    f(b)
    np.testing.assert_array_equal(b.numpy(), np.arange(6) ** 2)


@pytest.mark.parametrize("target", TARGETS)
def test_call_extern_calls_a_c_function(target: str) -> None:
    A = te.placeholder((8,), name="A")
    B = te.compute((8,), lambda i: tvm.tir.call_pure_extern("float32", "sqrtf", A[i]), name="B")
    C = te.compute((8,), lambda i: tvm.tir.call_extern("float64", "hypot", B[i], 1.0), name="C")
    assert isinstance(C, te.Tensor)
    f = tvm.build(te.create_schedule(C.op), [A, C], target)
    a = np.random.uniform(0, 4, 8).astype("float32")
    c = tvm.nd.array(np.zeros(8, "float64"))
    f(tvm.nd.array(a), c)
    np.testing.assert_allclose(c.numpy(), np.hypot(np.sqrt(a), 1.0), rtol=1e-6)


@pytest.mark.parametrize("target", TARGETS)
def test_a_packed_function_of_an_imported_module_is_found(target: str) -> None:
    calls: list[int] = []
    A = te.placeholder((3,), name="A")
    B = te.extern((3,), [A], lambda ins, outs: tvm.tir.call_packed("helper", outs[0]))
    assert isinstance(B, te.Tensor)
    f = tvm.build(te.create_schedule(B.op), [A, B], target, name="uses_helper")
    f.import_module(tvm.runtime.Module.from_functions("helpers", {"helper": calls.append}))
    f(tvm.nd.array(np.zeros(3, "float32")), tvm.nd.array(np.zeros(3, "float32")))
    assert len(calls) == 1


def test_a_buffer_argument_becomes_tvm_stack_make_array() -> None:
    buf = tvm.tir.decl_buffer((2, 3), "float16", name="X")
    call = tvm.tir.call_packed("f", buf, 7)
    assert isinstance(call, tvm.tir.Call)
    array = call.args[1]
    assert isinstance(array, tvm.tir.Call)
    assert cast(Any, array.op).name == "tir.tvm_stack_make_array"
    data, shape, strides, ndim, dtype, offset = array.args
    assert data is buf.data
    assert isinstance(shape, tvm.tir.Call)
    assert cast(Any, shape.op).name == "tir.tvm_stack_make_shape"
    assert [_int(d) for d in shape.args] == [2, 3]
    assert _int(strides) == 0 and _int(ndim) == 2 and dtype.dtype == "float16"
    assert _int(offset) == 0 and _int(call.args[2]) == 7


def _int(e: Any) -> int:
    return int(e)
