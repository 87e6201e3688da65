"""The reference model cnn_small, AOT-compiled (``relay.build`` with ``Executor("aot")``), runs
through ``pytvm.micro.Session`` on the ``host`` template and on QEMU's Cortex-M4
(``qemu-cortex-m4``, instruction-counted clock) and matches onnxruntime; ``time_evaluator`` on
``run`` times it there; a kernel of a source module runs on the board through its system
library; bad inputs are refused and the session goes on.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest

import pytvm as tvm
from pytvm import relay, te
from pytvm.micro import GeneratedProject, Session, generate_project, get_microtvm_template_projects
from pytvm.relay.backend import Executor, Runtime

pytestmark = pytest.mark.needs_cc

TARGETS = {"host": "c", "qemu-cortex-m4": "c -mcpu=cortex-m4"}
OPTIONS: dict[str, dict[str, Any]] = {"host": {}, "qemu-cortex-m4": {"icount_shift": 0}}


def _require_tools(template: str) -> None:
    if template == "qemu-cortex-m4":
        missing = [t for t in ("qemu-system-arm", "arm-none-eabi-gcc") if shutil.which(t) is None]
        if missing:
            pytest.skip(f"{' and '.join(missing)} not installed (`make mcu` installs them)")


@pytest.fixture(scope="module")
def cnn_small(reference_models: dict[str, Path]) -> tuple[Path, Any, dict[str, Any]]:
    path = reference_models["cnn_small"]
    mod, params = tvm.frontend.from_onnx(onnx.load(str(path)))
    return path, mod, params


@pytest.fixture(scope="module", params=sorted(TARGETS))
def cnn_project(
    request: pytest.FixtureRequest,
    cnn_small: tuple[Path, Any, dict[str, Any]],
    tmp_path_factory: pytest.TempPathFactory,
) -> GeneratedProject:
    template = str(request.param)
    _require_tools(template)
    _, mod, params = cnn_small
    factory = relay.build(
        mod,
        target=TARGETS[template],
        executor=Executor("aot", {"interface-api": "c", "unpacked-api": True}),
        runtime=Runtime("crt", {"system-lib": True}),
        params=params,
    )
    project = generate_project(
        get_microtvm_template_projects(template),
        factory,
        tmp_path_factory.mktemp(template) / "cnn_small",
        OPTIONS[template],
    )
    project.build()
    return project


def test_cnn_small_matches_onnxruntime(
    cnn_project: GeneratedProject, cnn_small: tuple[Path, Any, dict[str, Any]]
) -> None:
    path = cnn_small[0]
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal((1, 3, 32, 32)).astype("float32") for _ in range(2)]
    reference = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    with Session(cnn_project.transport()) as sess:
        executor = sess.create_aot_executor()
        assert executor.get_input_info() == ({"input": (1, 3, 32, 32)}, {"input": "float32"})
        for x in inputs:
            executor.set_input("input", x)
            executor.run()
            (expected,) = reference.run(None, {"input": x})
            np.testing.assert_allclose(
                executor.get_output(0).numpy(), expected, rtol=1e-4, atol=1e-5
            )
        timing = executor.module.time_evaluator("run", sess.device, number=1, repeat=2)()
        assert timing.mean > 0
        # refusals on the host side and on the device; the session keeps working
        with pytest.raises(ValueError, match=r"input 'input' is float32\[1, 3, 32, 32\]"):
            executor.set_input("input", inputs[0][:, :2])
        small = tvm.nd.array(np.zeros((1, 3, 16, 16), "float32"), sess.device)
        with pytest.raises(ValueError, match="has shape"):
            executor.module["set_input"](0, small)
        executor.run(input=inputs[0])
        (expected,) = reference.run(None, {"input": inputs[0]})
        np.testing.assert_allclose(executor.get_output(0).numpy(), expected, rtol=1e-4, atol=1e-5)


def test_kernel_runs_on_the_board_through_system_lib(tmp_path: Path) -> None:
    _require_tools("qemu-cortex-m4")
    n = 256
    a = te.placeholder((n,), name="A")
    b = te.placeholder((n,), name="B")
    c = te.compute((n,), lambda i: a[i] * b[i] + 1.0, name="C")
    mod = tvm.build(
        te.create_schedule(c.op), [a, b, c], target="c -mcpu=cortex-m4 --system-lib", name="fma"
    )
    project = generate_project("qemu-cortex-m4", mod, tmp_path / "fma", {"icount_shift": 0})
    project.build()
    x = np.linspace(-1, 1, n, dtype="float32")
    y = np.linspace(2, 3, n, dtype="float32")
    with Session(project.transport()) as sess:
        lib = sess.get_system_lib()
        args = [tvm.nd.array(v, sess.device) for v in (x, y, np.zeros(n, "float32"))]
        lib["fma"](*args)
        # a fused multiply-add rounds once: compare with the exact value
        np.testing.assert_allclose(args[2].numpy(), x.astype("float64") * y + 1, rtol=1e-6)
        with pytest.raises(AttributeError):
            lib["not_there"]
        assert lib.time_evaluator("fma", sess.device, number=10)(*args).mean > 0
