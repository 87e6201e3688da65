"""TVM's default AOT executor (``Executor("aot")``: interface-api ``packed``, unpacked-api
False) through the ``host`` template: ``Session.create_aot_executor()`` serves it like the C
interface, and the system library holds TVM's packed entry point
``tvmgen_default___tvm_main__`` (DLTensor arguments, checked); ``link-params: False`` is
refused naming the option.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest

import pytvm as tvm
from pytvm import relay
from pytvm.micro import GeneratedProject, Session, generate_project, get_microtvm_template_projects
from pytvm.relay.backend import Executor, Runtime
from pytvm.runtime.source_module import SourceModule

pytestmark = pytest.mark.needs_cc


@pytest.fixture(scope="module")
def cnn_small(reference_models: dict[str, Path]) -> tuple[Path, Any, dict[str, Any]]:
    path = reference_models["cnn_small"]
    mod, params = tvm.frontend.from_onnx(onnx.load(str(path)))
    return path, mod, params


@pytest.fixture(scope="module")
def packed_project(
    cnn_small: tuple[Path, Any, dict[str, Any]], tmp_path_factory: pytest.TempPathFactory
) -> GeneratedProject:
    _, mod, params = cnn_small
    factory = relay.build(
        mod,
        target="c",
        executor=Executor("aot"),
        runtime=Runtime("crt", {"system-lib": True}),
        params=params,
    )
    assert isinstance(factory.lib, SourceModule)
    assert "tvmgen_default___tvm_main__" in factory.lib.function_names
    assert "tvmgen_default_run" in factory.lib.sources["default_lib1.c"]
    project = generate_project(
        get_microtvm_template_projects("crt"),
        factory,
        tmp_path_factory.mktemp("packed") / "cnn_small",
    )
    project.build()
    return project


def test_default_aot_executor_runs_through_session(
    packed_project: GeneratedProject, cnn_small: tuple[Path, Any, dict[str, Any]]
) -> None:
    x = np.random.default_rng(1).standard_normal((1, 3, 32, 32)).astype("float32")
    (expected,) = ort.InferenceSession(str(cnn_small[0])).run(None, {"input": x})
    with Session(transport_context_manager=packed_project.transport()) as sess:
        executor = sess.create_aot_executor()
        executor.set_input("input", x)
        executor.run()
        np.testing.assert_allclose(executor.get_output(0).numpy(), expected, rtol=1e-4, atol=1e-5)
        # TVM's packed entry point in the system library: inputs then outputs as DLTensors
        main = sess.get_system_lib()["tvmgen_default___tvm_main__"]
        out = tvm.nd.array(np.zeros((1, 10), "float32"), sess.device)
        main(tvm.nd.array(x, sess.device), out)
        np.testing.assert_allclose(out.numpy(), expected, rtol=1e-4, atol=1e-5)
        small = tvm.nd.array(np.zeros((1, 3, 16, 16), "float32"), sess.device)
        with pytest.raises(ValueError, match=r"argument 0 \(input\) must have shape"):
            main(small, out)
        with pytest.raises(ValueError, match="takes 1 input and 1 output tensors"):
            main(out)
        main(tvm.nd.array(x, sess.device), out)  # the session goes on
        np.testing.assert_allclose(out.numpy(), expected, rtol=1e-4, atol=1e-5)


def test_interface_options_as_tvm(cnn_small: tuple[Path, Any, dict[str, Any]]) -> None:
    _, mod, params = cnn_small
    c_api = relay.build(
        mod,
        target="c -mcpu=cortex-m4",
        executor=Executor("aot", {"interface-api": "c", "unpacked-api": True}),
        runtime=Runtime("crt", {"system-lib": True}),
        params=params,
    )
    assert isinstance(c_api.lib, SourceModule)
    assert "___tvm_main__" not in c_api.lib.get_source()
    no_syslib = relay.build(
        mod,
        target="c -mcpu=cortex-m4",
        executor=Executor("aot", {"interface-api": "packed", "unpacked-api": True}),
        runtime=Runtime("crt"),
        params=params,
    )
    assert isinstance(no_syslib.lib, SourceModule)
    lib1 = no_syslib.lib.sources["default_lib1.c"]
    assert "tvmgen_default___tvm_main__" in lib1
    assert "TVMSystemLibEntryPoint" not in lib1
    crt = Runtime("crt")
    with pytest.raises(ValueError, match="link-params"):
        relay.build(
            mod, "c", executor=Executor("aot", {"link-params": False}), runtime=crt, params=params
        )
    with pytest.raises(ValueError, match="needs unpacked-api=True"):
        relay.build(
            mod, "c", executor=Executor("aot", {"interface-api": "c"}), runtime=crt, params=params
        )
