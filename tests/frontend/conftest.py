"""Fixtures of the frontend tests: the reference models, written once per session."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

MAKE_MODELS = Path("/work/shared/models/make_models.py")
REFERENCE_MODELS = ("mlp", "cnn_small", "resnet18", "mobilenet_v2", "transformer_block")


@pytest.fixture(scope="session")
def reference_models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """``{name: path}`` of the reference ONNX models (``make_models.py`` run into a temp dir)."""
    if not MAKE_MODELS.is_file():
        pytest.skip(f"the reference model generator {MAKE_MODELS} is not here")
    out = tmp_path_factory.mktemp("models")
    subprocess.run(
        [sys.executable, str(MAKE_MODELS), str(out), "--no-verify"],
        check=True,
        capture_output=True,
    )
    return {name: out / f"{name}.onnx" for name in REFERENCE_MODELS}
