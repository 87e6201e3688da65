"""Graph IR nodes: typed at construction, printed, interpreted."""

from __future__ import annotations

import numpy as np
import pytest

from pytvm import graph as g
from pytvm.ffi.errors import TVMValueError
from pytvm.graph.interpreter import interpret


def _conv_net() -> g.Function:
    x = g.Var("x", g.TensorType((1, 3, 8, 8), "float32"))
    w = g.const(np.arange(4 * 3 * 9, dtype="float32").reshape(4, 3, 3, 3) / 100)
    conv = g.call(
        "nn.conv2d", x, w, strides=(2, 2), padding=(1, 1, 1, 1), dilation=(1, 1), name="conv1"
    )
    out = g.call("nn.relu", g.call("nn.bias_add", conv, g.const(np.full(4, -0.5, "float32"))))
    return g.Function([x], out)


def test_calls_are_typed_when_built() -> None:
    func = _conv_net()
    assert func.checked_type == g.TensorType((1, 4, 4, 4), "float32")


def test_a_bad_shape_fails_at_the_node_naming_it() -> None:
    x = g.Var("x", g.TensorType((2, 3), "float32"))
    with pytest.raises(TVMValueError, match=r"add \(node 'bad'\).*Tensor\[\(2, 3\), float32\]"):
        g.call("add", x, g.const(np.ones(4, "float32")), name="bad")


def test_printer_shows_ops_attrs_and_types() -> None:
    text = str(g.IRModule.from_expr(_conv_net()))
    assert text.startswith("def @main(%x: Tensor[(1, 3, 8, 8), float32])")
    assert "nn.conv2d(%x, meta[Constant]" in text and "strides=[2, 2]" in text
    assert "/* conv1 */" in text and "ty=Tensor[(1, 4, 4, 4), float32]" in text


def test_interpreter_matches_a_direct_numpy_convolution() -> None:
    func = _conv_net()
    x = np.random.default_rng(0).standard_normal((1, 3, 8, 8)).astype("float32")
    w = np.arange(4 * 3 * 9, dtype="float32").reshape(4, 3, 3, 3) / 100
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    ref = np.zeros((1, 4, 4, 4), "float32")
    for f in range(4):
        for i in range(4):
            for j in range(4):
                ref[0, f, i, j] = (xp[0, :, 2 * i : 2 * i + 3, 2 * j : 2 * j + 3] * w[f]).sum()
    ref = np.maximum(ref - 0.5, 0)
    np.testing.assert_allclose(interpret(func, {"x": x}), ref, rtol=1e-5, atol=1e-5)
