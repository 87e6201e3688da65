"""``pytvm.micro.generate_project_from_mlf``: a Model Library Format archive of the reference
model mlp (AOT, host C) becomes a host project whose executor matches onnxruntime.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest

import pytvm as tvm
from pytvm import relay
from pytvm.graph.aot import AOTExecutorFactoryModule
from pytvm.micro import Session, export_model_library_format, generate_project_from_mlf
from pytvm.relay.backend import Executor, Runtime

pytestmark = pytest.mark.needs_cc


def test_project_from_mlf_runs_the_model(reference_models: dict[str, Path], tmp_path: Path) -> None:
    path = reference_models["mlp"]
    mod, params = tvm.frontend.from_onnx(onnx.load(str(path)))
    factory = relay.build(
        mod,
        target="c",
        executor=Executor("aot", {"interface-api": "c", "unpacked-api": True}),
        runtime=Runtime("crt", {"system-lib": True}),
        params=params,
    )
    assert isinstance(factory, AOTExecutorFactoryModule)
    mlf = tmp_path / "model.tar"
    export_model_library_format(factory, str(mlf))
    project = generate_project_from_mlf("crt", tmp_path / "proj", mlf, {"verbose": True})
    assert project.info()["model"]["inputs"][0]["name"] == factory.inputs[0].name
    project.build()
    spec = factory.inputs[0]
    x = np.random.default_rng(1).standard_normal(spec.shape).astype(spec.dtype)
    (expected,) = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(
        None, {spec.name: x}
    )
    with Session(project.transport()) as sess:
        executor = sess.create_aot_executor()
        executor.run(**{spec.name: x})
        np.testing.assert_allclose(executor.get_output(0).numpy(), expected, rtol=1e-4, atol=1e-5)
