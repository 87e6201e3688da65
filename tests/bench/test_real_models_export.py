"""The real-model suite and the operator cases: the registry, the inputs each model gets, the
output check, the operator models' shapes, one case measured end to end, one model exported.
"""

from __future__ import annotations

import math
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))

import ops  # type: ignore[import-not-found]  # noqa: E402
import real_models  # type: ignore[import-not-found]  # noqa: E402
import real_models_export  # type: ignore[import-not-found]  # noqa: E402

sys.path.remove(str(REPO / "bench"))  # the bench scripts' names (ffi, rpc, ...) stay private


def test_suite_spans_the_architecture_families() -> None:
    models = real_models_export.MODELS
    families = {spec.family for spec in models.values()}
    assert {"vision", "text", "speech", "ocr", "segmentation"} <= families
    assert all(spec.inputs and spec.inputs[0].shape[0] == 1 for spec in models.values())
    derived = [spec for spec in models.values() if spec.source is not None]
    assert {"int8"} <= {spec.family for spec in derived}
    for spec in derived:
        source = models[spec.source]
        assert source.source is None and spec.derive is not None and spec.build is None
        assert [i.name for i in spec.inputs] == [i.name for i in source.inputs]
    architectures = [spec for spec in models.values() if spec.source is None]
    assert len(architectures) >= 22 and all(spec.build is not None for spec in architectures)


def test_feeds_draw_integers_from_the_metadata_range(tmp_path: Path) -> None:
    graph = helper.make_graph(
        [helper.make_node("Cast", ["ids"], ["f"], to=TensorProto.FLOAT)],
        "g",
        [
            helper.make_tensor_value_info("ids", TensorProto.INT64, [1, 50]),
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
        ],
        [helper.make_tensor_value_info("f", TensorProto.FLOAT, [1, 50])],
    )
    model = helper.make_model(graph)
    entry = model.metadata_props.add()
    entry.key, entry.value = real_models_export.INPUT_RANGES_KEY, '{"ids": [5, 9]}'
    onnx.save(model, str(tmp_path / "m.onnx"))
    feeds = real_models.feeds(tmp_path / "m.onnx")
    assert feeds["ids"].dtype == np.int64 and feeds["ids"].shape == (1, 50)
    assert feeds["ids"].min() >= 5 and feeds["ids"].max() < 9
    assert feeds["x"].dtype == np.float32 and feeds["x"].shape == (2, 3)


def test_compare_is_relative_to_the_output_scale() -> None:
    ref = [np.array([100.0, -200.0], np.float32), np.array([1e-3, 0.0], np.float32)]
    ours = [ref[0] + np.float32(0.02), ref[1].copy()]
    max_abs, rel = real_models.compare(ours, ref)
    assert max_abs == pytest.approx(0.02, rel=1e-3) and rel == pytest.approx(1e-4, rel=1e-3)
    assert real_models.compare([ref[0][:1]], [ref[0]]) == (math.inf, math.inf)
    assert real_models.compare([np.array([np.nan], np.float32)], [ref[0][:1]])[1] == math.inf


def test_repeats_keep_the_fastest_run_the_cold_build_and_the_worst_difference() -> None:
    first = {"ms": 5.0, "build_s": 9.0, "max_abs": 1e-6, "rel": 1e-7}
    second = {"ms": 4.0, "build_s": 1.0, "max_abs": 2e-6, "rel": 2e-7}
    merged = real_models._best(first, second)
    assert merged == {"ms": 4.0, "build_s": 9.0, "max_abs": 2e-6, "rel": 2e-7}
    assert real_models._best({}, {"note": "ValueError: x"}) == {"note": "ValueError: x"}
    assert real_models._best({"note": "worker died"}, first)["ms"] == 5.0


def test_geomean() -> None:
    assert real_models.geomean([0.5, 2.0, 1.0]) == pytest.approx(1.0)
    assert math.isnan(real_models.geomean([]))


def test_operator_cases_have_the_shapes_they_claim() -> None:
    for case in ops.CASES:
        # large weights as graph inputs: the same shapes without drawing 150 MB of constants
        weights = {k: v for k, v in case.consts.items() if math.prod(v) > 1 << 16}
        consts = {k: v for k, v in case.consts.items() if k not in weights}
        light = replace(case, inputs={**case.inputs, **weights}, consts=consts)
        model = onnx.shape_inference.infer_shapes(ops.onnx_model(light))
        dims = model.graph.output[0].type.tensor_type.shape.dim
        assert tuple(d.dim_value for d in dims) == case.output, case.name


@pytest.mark.needs_cc
def test_operator_case_matches_onnxruntime() -> None:
    case = next(c for c in ops.CASES if c.name.startswith("silu"))
    result = ops.measure(case, threads=1, min_seconds=0.01)
    assert result["rel"] <= 1e-5 and result["pytvm_ms"] > 0 and result["ort_ms"] > 0


@pytest.mark.slow
@pytest.mark.skipif(
    not real_models_export.TORCH_PYTHON.exists(), reason="needs the PyTorch interpreter"
)
def test_export_is_deterministic_and_runs_in_onnxruntime(tmp_path: Path) -> None:
    import onnxruntime as ort

    for out in (tmp_path / "a", tmp_path / "b"):
        argv = [str(real_models_export.TORCH_PYTHON), str(REPO / "bench/real_models_export.py")]
        subprocess.run([*argv, "--out", str(out), "--only", "gru_speech"], check=True)
    first, second = (tmp_path / d / "gru_speech.onnx" for d in ("a", "b"))
    assert first.read_bytes() == second.read_bytes()
    sess = ort.InferenceSession(str(first), providers=["CPUExecutionProvider"])
    (scores,) = sess.run(None, real_models.feeds(first))
    assert scores.shape == (1, 200, 32)
    np.testing.assert_allclose(np.exp(scores).sum(-1), 1.0, rtol=1e-5)
