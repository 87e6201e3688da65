"""BindParams: parameters bound to arrays, their names and shapes checked."""

from __future__ import annotations

import numpy as np
import pytest

from pytvm import graph as g
from pytvm.ffi.errors import TVMValueError
from pytvm.graph.transform import bind_params

F32 = "float32"


def _var(name: str, *shape: int) -> g.Var:
    return g.Var(name, g.TensorType(shape, F32))


def _rand(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(F32)


def test_bind_params_checks_names_and_shapes() -> None:
    x, w = _var("x", 2, 3), _var("w", 4, 3)
    func = g.Function([x, w], g.call("nn.dense", x, w))
    bound = bind_params(func, {"w": _rand(4, 3)})
    assert [p.name for p in bound.params] == ["x"]
    with pytest.raises(TVMValueError, match=r"\['v'\] are not parameters"):
        bind_params(func, {"v": _rand(4, 3)})
    with pytest.raises(TVMValueError, match=r"parameter 'w' is Tensor\[\(4, 3\), float32\]"):
        bind_params(func, {"w": _rand(3, 4)})
