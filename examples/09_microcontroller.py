"""A model on a microcontroller: build it ahead of time for a Cortex-M4, check that it fits a
board's memory, export TVM's Model Library Format, and run it on an emulated board (QEMU's
mps2-an386) through a microTVM session, checked against ONNX Runtime.

Run: ``python examples/09_microcontroller.py`` (needs ``onnx`` and ``onnxruntime``; the board
needs ``arm-none-eabi-gcc`` and ``qemu-system-arm``: ``make mcu``. Without them the same model
runs on the ``host`` template, a process on this machine.)
"""

from __future__ import annotations

import importlib.util
import shutil
import tarfile
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

import pytvm as tvm


def _model() -> Any:
    """A keyword-spotting-like CNN on 49x10 features: conv, depthwise + pointwise, pool, dense."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)

    def weight(name: str, *shape: int) -> Any:
        return numpy_helper.from_array((rng.standard_normal(shape) * 0.2).astype("float32"), name)

    inits = [weight("w1", 16, 1, 10, 4), weight("dw", 16, 1, 3, 3), weight("pw", 16, 16, 1, 1)]
    inits += [weight("fc", 12, 16), weight("fc_b", 12)]
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["c1"], strides=[2, 2], pads=[4, 1, 5, 2]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "dw"], ["c2"], group=16, pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["r2"]),
        helper.make_node("Conv", ["r2", "pw"], ["c3"]),
        helper.make_node("Relu", ["c3"], ["r3"]),
        helper.make_node("GlobalAveragePool", ["r3"], ["p"]),
        helper.make_node("Flatten", ["p"], ["f"]),
        helper.make_node("Gemm", ["f", "fc", "fc_b"], ["logits"], transB=1),
        helper.make_node("Softmax", ["logits"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "kws_small",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 49, 10])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 12])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def main() -> None:
    """Build, check the fit, export, run on the board, compare, time."""
    if importlib.util.find_spec("onnx") is None or importlib.util.find_spec("onnxruntime") is None:
        print("skipped: onnx and onnxruntime are not installed (pip install onnx onnxruntime)")
        return
    import onnxruntime

    from pytvm import relay
    from pytvm.relay.backend import Executor, Runtime
    from pytvm.relay.backend.executor_factory import AOTExecutorFactoryModule

    onnx_model = _model()
    x = np.random.default_rng(1).standard_normal((1, 1, 49, 10)).astype("float32")
    mod, params = relay.frontend.from_onnx(onnx_model)
    factory = relay.build(
        mod,
        target="c -mcpu=cortex-m4",
        executor=Executor("aot", {"interface-api": "c", "unpacked-api": True}),
        runtime=Runtime("crt", {"system-lib": True}),
        params=params,
    )
    assert isinstance(factory, AOTExecutorFactoryModule)
    print(f"AOT: {len(factory.kernels)} kernel calls, workspace {factory.workspace_bytes} bytes")

    board = "qemu-cortex-m4"
    if shutil.which("qemu-system-arm") is None or shutil.which("arm-none-eabi-gcc") is None:
        board = "host"  # no emulator here: the same C as a process on this machine
    with tempfile.TemporaryDirectory() as tmp:
        tvm.micro.export_model_library_format(factory, f"{tmp}/model.tar")
        with tarfile.open(f"{tmp}/model.tar") as tar:
            names = sorted(n.removeprefix("./") for n in tar.getnames())
        names = [n for n in names if n.startswith("codegen/host/") and n.endswith((".c", ".h"))]
        print("Model Library Format:", ", ".join(names))
        if board != "host":
            report = tvm.micro.memory_report(factory, "stm32f4")
            print(f"fits stm32f4: {report.fits}")

        project = tvm.micro.generate_project(board, factory, Path(tmp) / "project")
        project.build()
        project.flash()  # starts QEMU (or the host process)
        with tvm.micro.Session(project.transport()) as sess:
            executor = sess.create_aot_executor()
            executor.set_input("x", x)
            executor.run()
            y = executor.get_output(0).numpy()
            timer = executor.module.time_evaluator("run", sess.device, number=3)
            seconds = timer().mean
    want = onnxruntime.InferenceSession(
        onnx_model.SerializeToString(), providers=["CPUExecutionProvider"]
    ).run(None, {"x": x})[0]
    print(f"ran on {board}: output shape {y.shape}, top class {int(y.argmax())}")
    print(f"matches ONNX Runtime: {bool(np.allclose(y, want, rtol=1e-4, atol=1e-6))}")
    print(f"time on the device: {seconds * 1e3:.3f} ms per run")


if __name__ == "__main__":
    main()
