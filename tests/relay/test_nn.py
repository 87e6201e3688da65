"""relay.nn and relay.op build typed graph calls with TVM's signatures."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from pytvm import relay
from pytvm.ffi.errors import TVMValueError


def test_conv2d_pool_flatten_types() -> None:
    x = relay.var("x", shape=(1, 3, 8, 8))
    w = relay.var("w", shape=(4, 3, 3, 3))
    y = relay.nn.conv2d(x, w, strides=2, padding=1, channels=4, kernel_size=3)
    assert _tensor_type(y).shape == (1, 4, 4, 4)
    p = relay.nn.max_pool2d(y, pool_size=2, strides=2)
    assert _tensor_type(p).shape == (1, 4, 2, 2)
    assert _tensor_type(relay.nn.batch_flatten(p)).shape == (1, 16)
    with pytest.raises(TVMValueError, match="not supported"):
        relay.nn.conv2d(x, w, data_layout="NHWC")


def test_batch_norm_gives_three_results() -> None:
    x = relay.var("x", shape=(1, 2, 2, 2))
    g, b, m, v = (relay.var(n, shape=(2,)) for n in ("g", "b", "m", "v"))
    out = relay.nn.batch_norm(x, g, b, m, v, epsilon=0.0)
    assert len(out) == 3 and out[1] is m
    func = relay.Function([x, g, b, m, v], out[0])
    run = relay.create_executor("debug", relay.IRModule.from_expr(func)).evaluate()
    ones, zeros = np.ones(2, "float32"), np.zeros(2, "float32")
    data = np.arange(8, dtype="float32").reshape(1, 2, 2, 2)
    np.testing.assert_allclose(run(data, ones, zeros, zeros, ones).numpy(), data)


def test_var_takes_a_type_or_a_shape() -> None:
    assert _tensor_type(relay.var("a", relay.TensorType((3,), "int32"))).dtype == "int32"
    assert _tensor_type(relay.var("s", "float16")).shape == ()
    with pytest.raises(TypeError):
        int(relay.Any())


def _tensor_type(expr: Any) -> relay.TensorType:
    ty = expr.checked_type
    assert isinstance(ty, relay.TensorType)
    return ty
