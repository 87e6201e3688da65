"""One tuning run of the convolution of bench/tune_tvm018.py, in the peer's own interpreter
(TVM v0.18's or pytvm's): the task found, tuned with the tuner and measure options of the spec
(a JSON object, the one argument), and one JSON line printed with every trial's GFLOP/s.

It imports only the standard library at the top, so TVM v0.18's interpreter can run it.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: The convolution: resnet18's layer1 3x3 convolution.
CONV = {"batch": 1, "in_c": 64, "out_c": 64, "size": 56, "kernel": 3, "stride": 1, "pad": 1}
#: The channel block of pytvm's ``conv2d_NCHWc.x86`` task (16 float32 lanes: AVX-512).
NCHWC_BLOCK = 16
#: The key the RPC servers register under.
KEY = "tune"


def _conv_nchwc_args(block: int = NCHWC_BLOCK) -> tuple[Any, ...]:
    """The arguments of pytvm's ``conv2d_NCHWc.x86`` task: TVM's, with the data and kernel
    already packed (``NCHW<block>c``, ``OIHW<block>i<block>o``), as pytvm's compute takes them.
    """
    c, b = CONV, block
    data = ("TENSOR", (c["batch"], c["in_c"] // b, c["size"], c["size"], b), "float32")
    kshape = (c["out_c"] // b, c["in_c"] // b, c["kernel"], c["kernel"], b, b)
    s, p = c["stride"], c["pad"]
    layout = f"NCHW{b}c"
    return (
        data,
        ("TENSOR", kshape, "float32"),
        (s, s),
        (p, p, p, p),
        (1, 1),
        layout,
        layout,
        "float32",
    )


def tvm_mcpu(system_cpu: str, flags: frozenset[str]) -> str:
    """TVM's ``-mcpu``: the CPU its LLVM names this machine, or, where that LLVM does not know
    it (``generic``: a CPU newer than the LLVM), the LLVM CPU with this machine's vector ISA
    (``icelake-server`` for AVX-512, ``haswell`` for AVX2 + FMA).
    """
    if system_cpu and system_cpu != "generic":
        return system_cpu
    if {"avx512f", "avx512bw", "avx512dq", "avx512vl"} <= flags:
        return "icelake-server"
    if {"avx2", "fma"} <= flags:
        return "haswell"
    return "generic"


def cpu_flags() -> frozenset[str]:
    """The CPU flags of this machine (``/proc/cpuinfo``; empty where there is none)."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                return frozenset(line.split(":", 1)[1].split())
    return frozenset()


def _tvm018_tasks(autotvm: Any, tvm: Any) -> tuple[list[Any], str]:
    import numpy as np
    from tvm import relay

    c = CONV
    data = relay.var("data", shape=(c["batch"], c["in_c"], c["size"], c["size"]))
    weight = relay.var("weight", shape=(c["out_c"], c["in_c"], c["kernel"], c["kernel"]))
    out = relay.nn.conv2d(
        data,
        weight,
        strides=(c["stride"], c["stride"]),
        padding=(c["pad"], c["pad"]),
        channels=c["out_c"],
        kernel_size=(c["kernel"], c["kernel"]),
    )
    mod = tvm.IRModule.from_expr(relay.Function([data, weight], out))
    rng = np.random.default_rng(0)
    params = {
        "weight": tvm.nd.array(
            rng.standard_normal(weight.type_annotation.concrete_shape).astype("float32")
        )
    }
    cpu = tvm_mcpu(tvm.target.codegen.llvm_get_system_cpu(), cpu_flags())
    target = tvm.target.Target(f"llvm -mcpu={cpu}")
    tasks = autotvm.task.extract_from_program(
        mod["main"], target=target, params=params, ops=(relay.op.get("nn.conv2d"),)
    )
    return list(tasks), str(target)


def _pytvm_tasks(autotvm: Any, onnx_path: str, template: str | None) -> tuple[list[Any], str]:
    import onnx

    from pytvm.frontend import from_onnx

    target = "llvm"
    if template == "conv2d_NCHWc.x86":
        from pytvm.autotvm.task.task import TASK_TABLE

        if template not in TASK_TABLE:
            raise LookupError(f"pytvm registers no template {template}")
        return [autotvm.task.create(template, _conv_nchwc_args(), target)], target
    mod, params = from_onnx(onnx.load(onnx_path))
    return list(autotvm.task.extract_from_program(mod, params=params, target=target)), target


def _tuner(autotvm: Any, name: str, task: Any) -> Any:
    tuners = autotvm.tuner
    if name == "xgb":
        return tuners.XGBTuner(task, num_threads=1)
    if name == "ga":
        return tuners.GATuner(task)
    if name == "gridsearch":
        return tuners.GridSearchTuner(task)
    return tuners.RandomTuner(task)


def tune(spec: dict[str, Any]) -> None:
    """Tune the convolution's task with ``spec``'s tuner and options; print one JSON line."""
    if spec["peer"] == "tvm018":
        os.environ.setdefault("TOPHUB_LOCATION", "NONE")
        import tvm
        from tvm import autotvm

        tasks, target = _tvm018_tasks(autotvm, tvm)
        version = tvm.__version__
    else:
        import pytvm
        from pytvm import autotvm

        tasks, target = _pytvm_tasks(autotvm, spec["onnx"], spec.get("template"))
        version = getattr(pytvm, "__version__", "pytvm")
    if spec.get("template"):
        tasks = [t for t in tasks if t.name == spec["template"]]
    if len(tasks) != 1:
        names = [t.name for t in tasks]
        raise LookupError(f"expected one tunable conv2d task, found {names}")
    task = tasks[0]
    measure = autotvm.measure_option(
        builder=autotvm.LocalBuilder(n_parallel=spec["n_parallel"], timeout=spec["build_timeout"]),
        runner=autotvm.RPCRunner(
            KEY,
            "127.0.0.1",
            spec["tracker"],
            number=spec["number"],
            repeat=spec["repeat"],
            min_repeat_ms=spec["min_repeat_ms"],
            timeout=spec["run_timeout"],
        ),
    )
    trials: list[dict[str, Any]] = []
    start = time.perf_counter()

    def record(_tuner: Any, inputs: Sequence[Any], results: Sequence[Any]) -> None:
        for res in results:
            ok = int(res.error_no) == 0
            mean = sum(res.costs) / len(res.costs) if ok else 0.0
            gflops = task.flop / mean / 1e9 if ok and mean > 0 else 0.0
            elapsed = time.perf_counter() - start
            trials.append({"gflops": gflops, "error_no": int(res.error_no), "t": elapsed})

    callbacks: list[Any] = [record]
    if spec.get("log"):
        callbacks.append(autotvm.callback.log_to_file(spec["log"]))
    tuner = _tuner(autotvm, spec["tuner"], task)
    tuner.tune(n_trial=spec["trials"], measure_option=measure, callbacks=callbacks)
    out = {
        "version": version,
        "target": target,
        "task": task.name,
        "workload": repr(task.workload),
        "flop": float(task.flop),
        "space": len(task.config_space),
        "wall_s": time.perf_counter() - start,
        "trials": trials,
        "best_config": str(tuner.best_config),
    }
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: tune_conv_worker.py SPEC_JSON (started by bench/tune_tvm018.py)")
    tune(json.loads(sys.argv[1]))
