"""relay.build: the factory, TVM's legacy (graph, lib, params) unpacking, and binding."""

from __future__ import annotations

import numpy as np
import pytest

import pytvm
from pytvm import relay
from pytvm.contrib import graph_executor
from pytvm.ffi.errors import TVMValueError
from pytvm.runtime.graph_executor import GraphExecutorFactoryModule


def test_build_unpacks_as_graph_lib_params() -> None:
    x = relay.var("x", shape=(4,))
    w = relay.var("w", shape=(4,))
    mod = relay.IRModule.from_expr(relay.Function([x, w], relay.multiply(x, w)))
    weight = np.arange(4, dtype="float32")
    with pytvm.transform.PassContext(opt_level=1):
        factory = relay.build(mod, "llvm", params={"w": weight})
    assert isinstance(factory, GraphExecutorFactoryModule)  # the graph executor's, by default
    graph, lib, params = factory
    assert isinstance(graph, str) and '"nodes"' in graph
    m = graph_executor.create(graph, lib, pytvm.cpu())
    m.set_input("x", np.full(4, 2.0, "float32"))
    m.set_input(**params)
    m.run()
    np.testing.assert_allclose(m.get_output(0).numpy(), 2.0 * weight)


def test_bind_params_by_name_makes_constants() -> None:
    x = relay.var("x", shape=(2,))
    w = relay.var("w", shape=(2,))
    func = relay.build_module.bind_params_by_name(
        relay.Function([x, w], relay.add(x, w)), {"w": np.ones(2, "float32")}
    )
    assert [p.name for p in func.params] == ["x"]
    assert isinstance(func.body, relay.Call)
    assert isinstance(func.body.args[1], relay.Constant)


def test_export_library_to_tar_loads_as_the_factory(tmp_path: object) -> None:
    x = relay.var("x", shape=(3,))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.add(x, relay.const(1.0))))
    lib = relay.build(mod, "llvm")
    path = f"{tmp_path}/deploy_lib.tar"
    lib.export_library(path)
    loaded = pytvm.runtime.load_module(path)
    m = graph_executor.GraphModule(loaded["default"](pytvm.cpu()))
    m.run(x=np.zeros(3, "float32"))
    np.testing.assert_allclose(m.get_output(0).numpy(), np.ones(3))


def test_building_for_a_gpu_raises_before_compiling() -> None:
    x = relay.var("x", shape=(3,))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.add(x, x)))
    with pytest.raises(TVMValueError, match="no cuda code generator"):
        relay.build(mod, pytvm.target.cuda())
