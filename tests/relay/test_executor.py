"""relay.create_executor: the interpreter and the compiled kinds agree, arguments bind by
position and name, and bad arguments raise.
"""

from __future__ import annotations

import numpy as np
import pytest

import pytvm
from pytvm import relay
from pytvm.ffi.errors import TVMValueError


def _affine() -> tuple[relay.IRModule, dict[str, np.ndarray]]:
    x = relay.var("x", shape=(2, 3))
    w = relay.var("w", shape=(4, 3))
    b = relay.var("b", shape=(4,))
    body = relay.nn.relu(relay.nn.bias_add(relay.nn.dense(x, w), b, axis=-1))
    rng = np.random.default_rng(0)
    params = {
        "w": rng.standard_normal((4, 3)).astype("float32"),
        "b": rng.standard_normal(4).astype("float32"),
    }
    return relay.IRModule.from_expr(relay.Function([x, w, b], body)), params


@pytest.mark.parametrize("kind", ["debug", "graph", "vm"])
def test_every_kind_computes_the_function(kind: str) -> None:
    mod, params = _affine()
    x = np.arange(6, dtype="float32").reshape(2, 3) - 2.0
    out = relay.create_executor(kind, mod, pytvm.cpu(), "llvm").evaluate()(x, **params)
    expected = np.maximum(x @ params["w"].T + params["b"], 0.0)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5, atol=1e-6)


def test_a_tuple_result_is_a_list_of_arrays() -> None:
    x = relay.var("x", shape=(3,))
    func = relay.Function([x], relay.Tuple([relay.add(x, x), relay.multiply(x, x)]))
    run = relay.create_executor("graph", relay.IRModule.from_expr(func)).evaluate()
    two, square = run(np.array([1.0, 2.0, 3.0], "float32"))
    np.testing.assert_allclose(two.numpy(), [2.0, 4.0, 6.0])
    np.testing.assert_allclose(square.numpy(), [1.0, 4.0, 9.0])


def test_evaluate_of_an_expression_returns_its_value() -> None:
    value = relay.create_executor("debug").evaluate(relay.add(relay.const(1.0), relay.const(2.0)))
    assert float(value.numpy()) == 3.0


def test_params_given_to_create_executor_are_bound() -> None:
    mod, params = _affine()
    run = relay.create_executor("graph", mod, params=params).evaluate()
    x = np.ones((2, 3), "float32")
    np.testing.assert_allclose(
        run(x).numpy(), np.maximum(x @ params["w"].T + params["b"], 0), rtol=1e-5
    )


def test_bad_arguments_raise() -> None:
    mod, params = _affine()
    run = relay.create_executor("debug", mod).evaluate()
    with pytest.raises(TVMValueError, match="shape"):
        run(np.ones((3, 2), "float32"), **params)
    with pytest.raises(TVMValueError, match="no value"):
        run(np.ones((2, 3), "float32"))
    with pytest.raises(TVMValueError, match="no parameter 'z'"):
        run(np.ones((2, 3), "float32"), z=1, **params)
    with pytest.raises(TVMValueError, match="unknown kind"):
        relay.create_executor("aot", mod)


@pytest.mark.parametrize("kind", ["graph", "vm"])
def test_a_result_outlives_the_next_call(kind: str) -> None:
    x = relay.var("x", shape=(3,))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.add(x, x)))
    run = relay.create_executor(kind, mod).evaluate()
    first = run(np.ones(3, "float32"))
    run(np.full(3, 5.0, "float32"))
    np.testing.assert_array_equal(first.numpy(), np.full(3, 2.0, "float32"))
