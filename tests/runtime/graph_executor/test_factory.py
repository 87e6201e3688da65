"""Graph factories and one-file artifacts: kernels, graph and parameters in one shared object,
loaded here and on a real pytvm RPC server over loopback.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

import pytvm
from pytvm import rpc
from pytvm.contrib import graph_executor
from pytvm.contrib.debugger import debug_executor
from pytvm.driver import CompiledModule
from pytvm.driver.c_compiler import compile_shared_object, default_flags
from pytvm.runtime.graph_executor import (
    GraphExecutorFactory,
    GraphModule,
    embedded_graph_c_source,
    read_embedded_graph,
)
from pytvm.testing.rpc import server_session

pytestmark = pytest.mark.needs_cc

Reference = Callable[..., tuple[np.ndarray, np.ndarray]]


@pytest.fixture
def artifact(
    kernel_lib: CompiledModule, graph_json: str, inputs: dict[str, np.ndarray], tmp_path: Path
) -> Path:
    """A one-file artifact compiled by hand: the kernels' C and the embedded graph in one .so."""
    params = pytvm.runtime.save_param_dict({"w": inputs["w"]})
    source = kernel_lib.get_source() + "\n" + embedded_graph_c_source(graph_json, params, "net")
    built = compile_shared_object(source, "net", flags=default_flags(), cache=tmp_path / "cache")
    path = tmp_path / "net.so"
    path.write_bytes(built.read_bytes())
    return path


def _check(m: GraphModule, inputs: dict[str, np.ndarray], numpy_reference: Reference) -> None:
    m.set_input(x=inputs["x"], y=inputs["y"])
    m.run()
    out, q = numpy_reference(inputs["x"], inputs["y"], inputs["w"])
    np.testing.assert_allclose(m.get_output(0).numpy(), out, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(m.get_output(1).numpy(), q, rtol=1e-6)


def test_load_module_of_an_artifact_is_a_factory(
    artifact: Path, graph_json: str, inputs: dict[str, np.ndarray], numpy_reference: Reference
) -> None:
    lib = pytvm.runtime.load_module(artifact)
    assert isinstance(lib, GraphExecutorFactory) and lib.type_key == "GraphExecutorFactory"
    assert lib.get_graph_json() == graph_json and lib["get_graph_json"]() == graph_json
    np.testing.assert_array_equal(lib.get_params()["w"].numpy(), inputs["w"])
    kernels = lib.get_lib()
    assert kernels.type_key == "library" and lib.imported_modules == [kernels]
    assert "k_dense" in kernels and lib.libmod_name == "net"
    _check(GraphModule(lib["net"](pytvm.cpu())), inputs, numpy_reference)
    assert pytvm.runtime.load_param_dict(lib["get_graph_params"]())["w"].shape == (6, 8)
    bare = lib["remove_params"]()
    with pytest.raises(AttributeError, match="no function 'default'"):
        _ = lib["default"]  # the factory is named "net"
    assert bare.get_params() == {}


def test_factory_exports_one_file_that_loads_back(
    kernel_lib: CompiledModule,
    graph_json: str,
    inputs: dict[str, np.ndarray],
    numpy_reference: Reference,
    tmp_path: Path,
) -> None:
    factory = GraphExecutorFactory(graph_json, {"w": inputs["w"]}, kernel_lib)
    _check(GraphModule(factory["default"](pytvm.cpu())), inputs, numpy_reference)
    factory.export_library(tmp_path / "net.so")
    loaded = pytvm.runtime.load_module(tmp_path / "net.so")
    assert isinstance(loaded, GraphExecutorFactory)
    embedded = read_embedded_graph(loaded.get_lib())  # type: ignore[arg-type]
    assert embedded is not None and embedded.module_name == "default"
    _check(GraphModule(loaded["default"](pytvm.cpu())), inputs, numpy_reference)
    loaded.export_library(tmp_path / "again.so")  # an artifact is copied as it is
    assert (tmp_path / "again.so").read_bytes() == (tmp_path / "net.so").read_bytes()
    # TVM's global makes a factory from a graph, a library and (name, array) pairs.
    made = pytvm.get_global_func("tvm.graph_executor_factory.create")(
        graph_json, kernel_lib, "default", "w", pytvm.nd.array(inputs["w"])
    )
    _check(GraphModule(made["default"](pytvm.cpu())), inputs, numpy_reference)


def test_factory_refuses_params_that_are_not_inputs(
    kernel_lib: CompiledModule, graph_json: str, inputs: dict[str, np.ndarray]
) -> None:
    factory = GraphExecutorFactory(graph_json, {"w": inputs["w"], "w2": inputs["w"]}, kernel_lib)
    with pytest.raises(ValueError, match=r"not inputs of the graph: 'w2'"):
        factory["default"](pytvm.cpu())


def test_an_incomplete_artifact_is_named(kernel_lib: CompiledModule, tmp_path: Path) -> None:
    source = kernel_lib.get_source() + '\nconst char __pytvm_graph_json[] = "{}";\n'
    built = compile_shared_object(source, "half", flags=default_flags(), cache=tmp_path)
    with pytest.raises(ValueError, match=r"has __pytvm_graph_json but no __pytvm_graph_format"):
        pytvm.runtime.load_module(built)


@pytest.fixture(scope="module")
def server() -> Iterator[rpc.RPCSession]:
    with server_session() as sess:
        yield sess


def test_artifact_runs_on_a_remote_server(
    server: rpc.RPCSession,
    artifact: Path,
    inputs: dict[str, np.ndarray],
    numpy_reference: Reference,
) -> None:
    server.upload(str(artifact))
    lib = server.load_module(artifact.name)
    m = GraphModule(lib["net"](server.cpu()))
    assert m.module.type_key == "rpc"
    _check(m, inputs, numpy_reference)
    out = m.get_output(0)
    assert out.device == server.cpu()  # the output stays on the server until .numpy()
    with pytest.raises(ValueError, match=r"input 'x' expects shape \(4, 8\) float32, got \(2,\)"):
        m.set_input("x", np.zeros(2, "float32"))
    with pytest.raises(ValueError, match=r"the graph has no input 'z'"):
        m.set_input("z", inputs["x"])
    result = m.benchmark(server.cpu(), number=3, repeat=2)
    assert len(result.results) == 2 and result.mean > 0
    end_to_end = m.benchmark(
        server.cpu(),
        number=2,
        repeat=2,
        end_to_end=True,
        x=pytvm.nd.array(inputs["x"], server.cpu()),
    )
    assert len(end_to_end.results) == 2


def test_create_with_a_remote_library_runs_on_the_server(
    server: rpc.RPCSession,
    kernel_lib: CompiledModule,
    graph_json: str,
    inputs: dict[str, np.ndarray],
    numpy_reference: Reference,
) -> None:
    server.upload(str(kernel_lib.path), "kernels.so")
    remote_lib = server.load_module("kernels.so")
    m = graph_executor.create(graph_json, remote_lib, server.cpu())
    m.set_input("w", pytvm.nd.array(inputs["w"]))
    _check(m, inputs, numpy_reference)
    dbg = debug_executor.create(graph_json, remote_lib, server.cpu())
    dbg.set_input(w=inputs["w"], x=inputs["x"], y=inputs["y"])
    report = dbg.profile(number=2)
    assert {n.name for n in report.nodes} == {"add0", "relu0", "split0", "add1", "dense0"}
    with pytest.raises(ValueError, match="the devices are local but the library is remote"):
        graph_executor.create(graph_json, remote_lib, pytvm.cpu())
    with pytest.raises(ValueError, match="the devices are remote but the library is local"):
        graph_executor.create(graph_json, kernel_lib, server.cpu())


def test_incbin_artifact_from_an_awkward_directory_name(
    kernel_lib: CompiledModule,
    graph_json: str,
    inputs: dict[str, np.ndarray],
    numpy_reference: Reference,
    tmp_path: Path,
) -> None:
    blobs = tmp_path / 'a "quoted" dir\\with ünïcode'
    blobs.mkdir()
    params = pytvm.runtime.save_param_dict({"w": inputs["w"]})
    source = kernel_lib.get_source() + embedded_graph_c_source(graph_json, params, blob_dir=blobs)
    assert ".incbin" in source and f"__pytvm_graph_params_size = {len(params)};" in source
    built = compile_shared_object(source, "incbin", flags=default_flags(), cache=tmp_path / "c")
    lib = pytvm.runtime.load_module(built)
    assert isinstance(lib, GraphExecutorFactory) and lib.get_graph_json() == graph_json
    _check(GraphModule(lib["default"](pytvm.cpu())), inputs, numpy_reference)
