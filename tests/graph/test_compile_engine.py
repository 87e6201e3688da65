"""The compile engine's cache: keyed by structure (hash, then equality), the device type and the
target; one kernel per distinct structure, and one name for it whether lowered or not.
"""

from __future__ import annotations

from pytvm import graph as g
from pytvm.graph.compile_engine import CacheKey, CompileEngine
from pytvm.target import Target


def _function(
    shape: tuple[int, ...] = (4, 8), dtype: str = "float32", axis: int = -1, param: str = "p0"
) -> g.Function:
    """The fused function ``softmax(p0 + p0, axis)``, built afresh each time."""
    p = g.Var(param, g.TensorType(shape, dtype))
    body = g.call("nn.softmax", g.call("add", p, p), axis=axis)
    return g.Function((p,), body, g.Attrs.of(Primitive=1, hint="add_nn_softmax"))


def _primitive(
    shape: tuple[int, ...] = (4, 8), dtype: str = "float32", axis: int = -1, param: str = "p0"
) -> g.Call:
    """A call of :func:`_function`."""
    func = _function(shape, dtype, axis, param)
    return g.Call(func, (g.Var("x", g.TensorType(shape, dtype)),))


def test_functions_built_apart_alike_lower_once() -> None:
    engine = CompileEngine(Target("c"))
    first = engine.lower(_primitive())
    again = engine.lower(_primitive(param="renamed"))
    assert again is first
    assert (engine.misses, engine.hits) == (1, 1)
    assert [f.name for f in engine.functions] == ["fused_add_nn_softmax"]


def test_an_attribute_a_dtype_or_a_shape_makes_another_kernel() -> None:
    engine = CompileEngine(Target("c"))
    calls = [
        _primitive(),
        _primitive(axis=0),
        _primitive(dtype="float64"),
        _primitive(shape=(8, 4)),
    ]
    names = [engine.lower(c).name for c in calls]
    assert (engine.misses, engine.hits) == (4, 0)
    assert names == [
        "fused_add_nn_softmax",
        "fused_add_nn_softmax_1",
        "fused_add_nn_softmax_2",
        "fused_add_nn_softmax_3",
    ]


def test_the_device_type_and_the_active_target_are_part_of_the_key() -> None:
    func = _function()
    assert CacheKey(func, 1, "c") == CacheKey(_function(param="q"), 1, "c")
    assert CacheKey(func, 1, "c") != CacheKey(func, 2, "c")
    assert CacheKey(func, 1, "c") != CacheKey(func, 1, "llvm")
    engine = CompileEngine(Target("c"))
    with Target("c"):
        engine.lower(_primitive())
    with Target("llvm"):
        engine.lower(_primitive())
    assert engine.misses == 2


def test_the_hint_names_the_kernel_but_is_not_part_of_the_key() -> None:
    call = _primitive()
    assert isinstance(call.op, g.Function)
    other = g.Call(call.op.with_attr(hint="renamed"), call.args)
    engine = CompileEngine(Target("c"))
    assert engine.lower(call) is engine.lower(other)


def test_kernel_name_names_as_lowering_does_without_lowering() -> None:
    engine = CompileEngine(Target("c"))
    calls = [_primitive(), _primitive(shape=(2, 2)), _primitive()]
    names = [engine.kernel_name(c) for c in calls]
    assert names == ["fused_add_nn_softmax", "fused_add_nn_softmax_1", "fused_add_nn_softmax"]
    assert engine.functions == []
    assert [engine.kernel(c) for c in calls] == names
