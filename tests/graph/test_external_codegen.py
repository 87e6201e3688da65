"""External code generation (BYOC): offloaded functions are compiled by ``relay.ext.<name>``."""

from __future__ import annotations

import ctypes
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import pytvm
from pytvm import graph as g
from pytvm.graph.interpreter import interpret
from pytvm.graph.transform import partition_graph
from pytvm.runtime import Module
from pytvm.runtime.graph_executor import GraphModule
from pytvm.runtime.module import LibraryModule
from pytvm.testing import compile_c

F32 = "float32"

_KERNEL = r"""
#include "pytvm/c_runtime_api.h"
#include "pytvm/dlpack.h"

int {symbol}_calls = 0;

TVM_DLL int {symbol}(TVMValue* args, int* codes, int n, TVMValue* ret, int* ret_code,
                     void* resource) {{
  (void)codes; (void)ret; (void)resource;
  if (n != 3) {{ TVMAPISetLastError("{symbol}: expected 3 arrays"); return -1; }}
  const float* a = (const float*)((DLTensor*)args[0].v_handle)->data;
  const float* b = (const float*)((DLTensor*)args[1].v_handle)->data;
  float* c = (float*)((DLTensor*)args[2].v_handle)->data;
  for (long i = 0; i < {size}; ++i) c[i] = a[i] * b[i];
  {symbol}_calls += 1;
  *ret_code = kTVMNullptr;
  return 0;
}}
"""


@pytest.fixture
def ccompiler(tmp_path: Path) -> Iterator[list[Module]]:
    """``relay.ext.ccompiler``: C source for an elementwise multiply, compiled and loaded."""
    made: list[Module] = []

    def codegen(func: g.Function) -> Module:
        body = func.body
        assert isinstance(body, g.Call) and body.op == "multiply"
        symbol = str(func.attrs["global_symbol"])
        size = int(np.prod(body.checked_type.shape))  # type: ignore[union-attr]
        source = _KERNEL.format(symbol=symbol, size=size)
        module = pytvm.runtime.load_module(compile_c(source, tmp_path, symbol))
        made.append(module)
        return module

    pytvm.register_func("relay.ext.ccompiler", codegen, override=True)
    try:
        yield made
    finally:
        pytvm.remove_global_func("relay.ext.ccompiler")


def test_an_offloaded_multiply_runs_in_the_external_module(ccompiler: list[Module]) -> None:
    x, y = (g.Var(n, g.TensorType((4, 8), F32)) for n in "xy")
    func = g.Function([x, y], g.call("exp", g.call("multiply", g.call("sqrt", x), y)))
    mod = partition_graph(g.IRModule.from_expr(func), "ccompiler", lambda c: c.op == "multiply")
    lib = g.build(mod, target="c")
    assert len(ccompiler) == 1
    m = GraphModule(lib["default"](pytvm.cpu()))
    a = np.random.default_rng(0).uniform(1, 2, (4, 8)).astype(F32)
    b = np.random.default_rng(1).uniform(1, 2, (4, 8)).astype(F32)
    m.set_input(x=a, y=b)
    m.run()
    m.run()
    np.testing.assert_allclose(
        m.get_output(0).numpy(), interpret(func, {"x": a, "y": b}), rtol=1e-5
    )
    ext = ccompiler[0]
    assert isinstance(ext, LibraryModule)
    calls = ctypes.c_int.in_dll(ctypes.CDLL(str(ext.path)), "ccompiler_0_calls")
    assert calls.value == 2  # the external kernel ran once per run
    assert "ccompiler_0" in lib.get_graph_json()


def test_a_missing_external_compiler_is_named() -> None:
    x = g.Var("x", g.TensorType((4,), F32))
    mod = partition_graph(
        g.IRModule.from_expr(g.Function([x], g.call("multiply", x, x))), "nosuch", lambda c: True
    )
    with pytest.raises(ValueError, match=r"no external code generator for compiler 'nosuch'"):
        g.build(mod, target="c")
