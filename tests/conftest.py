"""Fixtures shared by every test directory: the reference ONNX models, written once a session."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

MAKE_MODELS = Path(__file__).resolve().parents[1] / "models" / "make_models.py"
REFERENCE_MODELS = ("mlp", "cnn_small", "resnet18", "mobilenet_v2", "transformer_block")


@pytest.fixture(scope="session")
def reference_models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """``{name: path}`` of the reference ONNX models (``models/make_models.py``, deterministic)."""
    out = tmp_path_factory.mktemp("models")
    subprocess.run(
        [sys.executable, str(MAKE_MODELS), str(out), "--no-verify"],
        check=True,
        capture_output=True,
    )
    return {name: out / f"{name}.onnx" for name in REFERENCE_MODELS}
