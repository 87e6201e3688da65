"""Kernels named after C library functions (``exp``, ``sin``, ``isnan`` ...) build and run in
both code generators, and after ``export_library`` + ``load_module``, under their own names.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pytvm as tvm
from pytvm import te
from pytvm.codegen.abi import export_symbol


def test_a_c_library_name_is_exported_under_a_prefix() -> None:
    assert export_symbol("exp") == "pytvm_kernel_exp"
    assert export_symbol("isnan") == "pytvm_kernel_isnan"
    assert export_symbol("my_kernel") == "my_kernel"
    assert export_symbol("main") == "__tvm_main__"


@pytest.mark.parametrize("target", ["c", "llvm"])
@pytest.mark.parametrize(
    ("name", "dtype", "fcompute", "reference"),
    [
        ("exp", "float64", te.exp, np.exp),  # calls libm's exp itself
        ("sin", "float32", lambda x: te.exp(x) + 1.0, lambda a: np.exp(a) + 1.0),
        ("isnan", "float32", lambda x: x * 2.0, lambda a: a * 2.0),
    ],
)
def test_a_kernel_named_like_a_c_function_runs(
    target: str, name: str, dtype: str, fcompute: object, reference: object, tmp_path: Path
) -> None:
    A = te.placeholder((6,), name="A", dtype=dtype)
    B = te.compute((6,), lambda i: fcompute(A[i]), name="B")  # type: ignore[operator]
    f = tvm.build(te.create_schedule(B.op), [A, B], target, name=name)
    a = np.random.uniform(-1, 1, 6).astype(dtype)
    expected = reference(a)  # type: ignore[operator]
    for mod in (f, _reloaded(f, tmp_path)):
        b = tvm.nd.array(np.zeros(6, dtype))
        mod[name](tvm.nd.array(a), b)
        np.testing.assert_allclose(b.numpy(), expected, rtol=1e-6)
        b = tvm.nd.array(np.zeros(6, dtype))
        mod(tvm.nd.array(a), b)  # the entry function of a one-kernel library
        np.testing.assert_allclose(b.numpy(), expected, rtol=1e-6)


def _reloaded(mod: tvm.runtime.Module, tmp_path: Path) -> tvm.runtime.Module:
    path = tmp_path / "lib.so"
    mod.export_library(str(path))
    return tvm.runtime.load_module(str(path))
