"""Auto-tuning a model across a tracker fleet, as TVM's ``tune_relay_x86`` tutorial does: a
tracker and two RPC servers (each pinned to its own core where ``taskset`` exists), the model's
tunable kernels extracted as tasks, each searched by ``XGBTuner`` with candidates built here in
parallel and timed on the servers, the records logged, the best applied at build time.

Run: ``python examples/10_autotuning.py`` (needs ``onnx``, ``onnxruntime`` and ``xgboost``).
The same from the command line: ``pytvm tune model.onnx --rpc-tracker 127.0.0.1:9190
--rpc-key x86 --trials 40 -o records.json`` then ``pytvm compile model.onnx
--tuning-records records.json``.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

import pytvm as tvm
from pytvm import autotvm, relay, rpc
from pytvm.contrib import graph_executor
from pytvm.rpc.tracker import Tracker

KEY = "x86"
TRIALS = 8  # per task: enough to see the flow; real tuning runs hundreds


def _model() -> Any:
    """A small CNN: a 3x3 convolution, a pointwise one, global pooling and a dense layer."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)

    def weight(name: str, *shape: int) -> Any:
        return numpy_helper.from_array((rng.standard_normal(shape) * 0.1).astype("float32"), name)

    inits = [weight("w1", 32, 16, 3, 3), weight("w2", 64, 32, 1, 1), weight("fc", 10, 64)]
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2"], ["c2"]),
        helper.make_node("Relu", ["c2"], ["r2"]),
        helper.make_node("GlobalAveragePool", ["r2"], ["p"]),
        helper.make_node("Flatten", ["p"], ["f"]),
        helper.make_node("Gemm", ["f", "fc"], ["y"], transB=1),
    ]
    graph = helper.make_graph(
        nodes,
        "small_cnn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 32, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _start_servers(tracker_port: int) -> list[subprocess.Popen[bytes]]:
    """Two RPC servers registered with the tracker under KEY, pinned to cores 0 and 1."""
    servers = []
    for cpu in (0, 1):
        pin = ["taskset", "-c", str(cpu)] if shutil.which("taskset") else []
        argv = ["-m", "pytvm.exec.rpc_server", "--tracker", f"127.0.0.1:{tracker_port}"]
        argv += ["--key", KEY, "--host", "127.0.0.1", "--port", "0", "--silent"]
        servers.append(subprocess.Popen([*pin, sys.executable, *argv]))
    deadline = time.monotonic() + 60
    while True:
        with rpc.connect_tracker("127.0.0.1", tracker_port) as tracker:
            info = tracker.summary()["server_info"]
        if sum(item["key"] == f"server:{KEY}" for item in info) == len(servers):
            return servers
        if time.monotonic() > deadline or any(s.poll() is not None for s in servers):
            raise RuntimeError("the RPC servers did not register with the tracker")
        time.sleep(0.1)


def tune(mod: Any, params: dict[str, Any], tracker_port: int, log: Path) -> int:
    """Extract the model's tasks and tune each through the tracker's servers into ``log``."""
    tasks = autotvm.task.extract_from_program(mod["main"], target="llvm", params=params)
    print(f"tasks: {len(tasks)} ({', '.join(t.name for t in tasks)})")
    measure_option = autotvm.measure_option(
        builder=autotvm.LocalBuilder(n_parallel=2),
        runner=autotvm.RPCRunner(
            KEY, "127.0.0.1", tracker_port, number=5, repeat=3, min_repeat_ms=10, timeout=20
        ),
    )
    history = list(autotvm.record.load_from_file(log)) if log.exists() else []
    for i, task in enumerate(tasks):
        tuner = autotvm.tuner.XGBTuner(task, plan_size=4, loss_type="reg")
        tuner.load_history(history)  # resume: what the log holds is not measured again
        done = sum(inp.task.workload == task.workload for inp, _ in history)
        n_trial = min(TRIALS, len(task.config_space)) - done
        if n_trial <= 0:
            continue
        tuner.tune(
            n_trial=n_trial,
            early_stopping=None,
            measure_option=measure_option,
            callbacks=[
                autotvm.callback.progress_bar(n_trial, prefix=f"[Task {i + 1:2d}/{len(tasks)}]"),
                autotvm.callback.log_to_file(str(log)),
            ],
            default_first=True,  # the untuned build's configuration is trial 1
        )
    return len(tasks)


def latency_ms(lib: Any, x: np.ndarray) -> tuple[np.ndarray, float]:
    """The model's output for ``x`` and its mean latency on this machine."""
    dev = tvm.cpu()
    module = graph_executor.GraphModule(lib["default"](dev))
    module.set_input("x", x)
    module.run()
    timer = module.module.time_evaluator("run", dev, number=20, repeat=5)
    return module.get_output(0).numpy(), min(timer().results) * 1e3


def main() -> None:
    """Tune the model through a local fleet, then build it with the records and compare."""
    import onnxruntime as ort

    onnx_model = _model()
    mod, params = relay.frontend.from_onnx(onnx_model)
    x = np.random.default_rng(1).standard_normal((1, 16, 32, 32)).astype("float32")
    with tempfile.TemporaryDirectory() as tmp:
        log, best = Path(tmp) / "records.json", Path(tmp) / "best.json"
        with Tracker(host="127.0.0.1", port=0, silent=True) as tracker:
            servers = _start_servers(tracker.port)
            try:
                tune(mod, params, tracker.port, log)
                measured = len(log.read_text().splitlines())
                tune(mod, params, tracker.port, log)  # a restart measures nothing again
                again = len(log.read_text().splitlines()) - measured
                print(f"records: {measured} measured, {again} more after a restart")
            finally:
                for server in servers:
                    server.terminate()
                    server.wait(timeout=30)
        autotvm.record.pick_best(log, best)
        with autotvm.apply_history_best(str(best)):
            tuned = relay.build(mod, target="llvm", params=params)
        untuned = relay.build(mod, target="llvm", params=params)
    (expected,) = ort.InferenceSession(onnx_model.SerializeToString()).run(None, {"x": x})
    y_tuned, ms_tuned = latency_ms(tuned, x)
    y_untuned, ms_untuned = latency_ms(untuned, x)
    ok = np.allclose(y_tuned, expected, rtol=1e-4, atol=1e-4)
    print(f"matches ONNX Runtime: {ok and np.allclose(y_untuned, expected, rtol=1e-4, atol=1e-4)}")
    print(f"latency: untuned {ms_untuned:.3f} ms, tuned {ms_tuned:.3f} ms on this machine")


if __name__ == "__main__":
    main()
