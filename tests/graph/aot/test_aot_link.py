"""Two AOT models link into one program: every external symbol carries its module's prefix."""

from __future__ import annotations

import ctypes
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pytvm import relay
from pytvm.graph.aot import build_aot

pytestmark = pytest.mark.needs_cc


def _model(scale: float) -> relay.Function:
    x = relay.var("x", shape=(2, 8))
    w = relay.const(np.full((2, 8), scale, np.float32))
    return relay.Function([x], relay.sigmoid(relay.multiply(x, w)))


def test_two_models_link_together(tmp_path: Path, host_cc: str, aot_c: Any) -> None:
    factories = [
        build_aot(_model(s), "c", mod_name=n) for s, n in ((0.5, "first"), (2.0, "second"))
    ]
    assert factories[0].kernels[0].name == "tvmgen_first_fused_multiply_sigmoid"
    sources: list[str] = []
    for f in factories:
        sources += map(str, aot_c.write_sources(f, tmp_path))
    lib_path = tmp_path / "both.so"
    aot_c.compile_c(
        host_cc,
        [
            *aot_c.STRICT,
            "-O2",
            *factories[0].lib.cflags,
            "-fPIC",
            "-shared",
            f"-I{tmp_path}",
            *sources,
            "-o",
            str(lib_path),
        ],
        tmp_path,
    )
    x = np.linspace(-3, 3, 16, dtype=np.float32).reshape(2, 8)
    for f, scale in zip(factories, (0.5, 2.0), strict=True):
        (y,) = aot_c.run_shared_object(lib_path, f, [x])
        np.testing.assert_allclose(y, 1 / (1 + np.exp(-x * scale)), rtol=1e-5)
    lib = ctypes.CDLL(str(lib_path))
    assert hasattr(lib, "tvmgen_first_run") and hasattr(lib, "tvmgen_second_run")
