"""``topi.testing.common``: dispatch by target key as TVM (first key the map has, else
``generic``), a target pytvm cannot compile for is an error, and the getters return CPU
schedules that run.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import pytvm
from pytvm import te, topi
from pytvm.ffi.errors import TVMKeyError, TVMTypeError, TVMValueError
from pytvm.target import Target
from pytvm.topi import testing


def test_dispatch_takes_the_first_key_the_map_has() -> None:
    table = {"generic": "g", "cpu": "c", "arm_cpu": "a"}
    assert testing.dispatch("llvm", table) == "c"
    assert testing.dispatch(Target("llvm -keys=arm_cpu,cpu"), table) == "a"
    assert testing.dispatch("c", {"generic": "g"}) == "g"


def test_dispatch_errors() -> None:
    with pytest.raises(TVMValueError, match="CPUs only"):
        testing.dispatch(Target("llvm -keys=gpu"), {"generic": 1, "gpu": 2})
    with pytest.raises(TVMKeyError):
        testing.dispatch("llvm", {"arm_cpu": 1})
    with pytest.raises(TVMTypeError):
        testing.dispatch(3, {"generic": 1})  # type: ignore[arg-type]


def test_getters_give_cpu_schedules_that_run() -> None:
    x = np.random.default_rng(0).random((4, 33), "float32")
    X = te.placeholder(x.shape, name="X")
    cases: list[tuple[Any, Any, np.ndarray]] = [
        (testing.get_broadcast_schedule, lambda t: topi.add(t, 1.0), x + 1),
        (testing.get_elemwise_schedule, topi.exp, np.exp(x)),
        (testing.get_reduce_schedule, lambda t: topi.sum(t, axis=1), x.sum(axis=1)),
    ]
    for get, compute, ref in cases:
        with Target("llvm"):
            Y = compute(X)
            s = get("llvm")([Y])
        f = pytvm.build(s, [X, Y], "llvm")
        y = pytvm.nd.array(np.zeros([int(d) for d in Y.shape], "float32"))
        f(pytvm.nd.array(x), y)
        np.testing.assert_allclose(y.numpy(), ref, rtol=1e-5)
    assert testing.get_injective_schedule("llvm") is topi.x86.schedule_injective
    assert testing.get_conv2d_nhwc_implement("llvm")[0] is topi.x86.conv2d_nhwc
