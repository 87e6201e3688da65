"""Every distinct call the importer emits for the small reference models compiles to C under
the default schedules and computes what the reference interpreter computes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pytvm.frontend import from_onnx
from pytvm.graph import Call, TensorType, Tuple
from pytvm.graph.functor import post_order
from pytvm.testing.graph_ops import OpCase, build_cases, interpret_case, run_compiled

pytestmark = pytest.mark.needs_cc

MODELS = ("cnn_small", "transformer_block")


def _array(ty: Any, rng: np.random.Generator) -> np.ndarray:
    assert isinstance(ty, TensorType)
    if ty.dtype.startswith("int"):
        return rng.integers(0, 3, ty.shape).astype(ty.dtype)
    return rng.uniform(0.5, 1.5, ty.shape).astype(ty.dtype)


def _cases(path: Path) -> list[OpCase]:
    mod, _ = from_onnx(path)
    rng = np.random.default_rng(0)
    cases: dict[tuple[Any, ...], OpCase] = {}
    for node in post_order(mod["main"].body):
        if not isinstance(node, Call) or not isinstance(node.op, str):
            continue
        key = (node.op, node.attrs, tuple(str(a.checked_type) for a in node.args))
        if key in cases:
            continue
        inputs = [
            [_array(f.checked_type, rng) for f in a.fields]
            if isinstance(a, Tuple)
            else _array(a.checked_type, rng)
            for a in node.args
        ]
        name = f"{path.stem}_{len(cases)}_{node.op}"
        cases[key] = OpCase(name, node.op, inputs, dict(node.attrs), rtol=1e-4, atol=1e-4)
    return list(cases.values())


@pytest.mark.parametrize("model", MODELS)
def test_model_calls_compile_and_match_the_interpreter(
    model: str, reference_models: dict[str, Path]
) -> None:
    cases = _cases(reference_models[model])
    mod, errors = build_cases(cases)
    assert not errors, errors
    for case in cases:
        want = interpret_case(case)
        got = run_compiled(mod, case)
        np.testing.assert_allclose(got, want, rtol=case.rtol, atol=case.atol, err_msg=case.name)
