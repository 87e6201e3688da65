"""``pytvm run``: run a compiled model here or on a device behind a tracker, check and time it.

In the style of TVM's ``tvmc run``::

    pytvm run net.so --inputs x.npz --print-time --print-top 5 --compare model.onnx
    pytvm run net.so --rpc-tracker 127.0.0.1:9190 --rpc-key board --print-time
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from pytvm.cli._npz_inputs import read_inputs
from pytvm.ffi.errors import TVMValueError

__all__ = ["add_parser", "run"]


def add_parser(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    """Register ``run`` on ``subparsers`` and return its parser."""
    parser = subparsers.add_parser(
        "run",
        help="run a compiled model (locally or through an RPC tracker)",
        description="Load a shared object written by `pytvm compile`, run it on the inputs, "
        "print outputs, times and, with --compare, its error against ONNX Runtime.",
    )
    parser.add_argument("module", help="the shared object from `pytvm compile`")
    parser.add_argument("--inputs", help=".npz of the inputs by name (default: random normal)")
    parser.add_argument("-o", "--outputs", help="write the outputs to this .npz")
    parser.add_argument("--rpc-tracker", help="host:port of an RPC tracker: run on its device")
    parser.add_argument("--rpc-key", help="the device key to request from the tracker")
    parser.add_argument("--print-time", action="store_true", help="time the run")
    parser.add_argument("--repeat", type=int, default=10, help="timed repetitions")
    parser.add_argument("--number", type=int, default=1, help="runs per repetition")
    parser.add_argument("--print-top", type=int, metavar="N", help="print output 0's top N")
    parser.add_argument("--profile", action="store_true", help="print per-node times")
    parser.add_argument(
        "--compare", metavar="MODEL.onnx", help="run ONNX Runtime on the same inputs; print errors"
    )
    return parser


def _inputs(args: argparse.Namespace, m: Any, params: set[str]) -> dict[str, np.ndarray]:
    all_shapes, dtypes = m.get_input_info()
    shapes = {k: v for k, v in all_shapes.items() if k not in params}
    if args.inputs:
        return read_inputs(args.inputs, all_shapes, dtypes, required=shapes)
    rng = np.random.default_rng(0)
    print("no --inputs: using random normal inputs (seed 0)", file=sys.stderr)
    return {
        name: rng.standard_normal(tuple(shapes[name])).astype(str(dtypes[name])) for name in shapes
    }


def _session(args: argparse.Namespace) -> Any:
    if not args.rpc_tracker:
        return None
    from pytvm import rpc

    host, _, port = args.rpc_tracker.rpartition(":")
    if not host or not port.isdigit() or not args.rpc_key:
        raise TVMValueError("--rpc-tracker takes host:port and needs --rpc-key")
    tracker = rpc.connect_tracker(host, int(port))
    return tracker.request(args.rpc_key)


def run(args: argparse.Namespace) -> int:
    """Run ``args.module`` and print what was asked."""
    import pytvm
    from pytvm.runtime.graph_executor import GraphModule

    sess = _session(args)
    if sess is None:
        lib = pytvm.runtime.load_module(args.module)
        dev = pytvm.cpu()
    else:
        sess.upload(args.module)
        lib = sess.load_module(Path(args.module).name)
        dev = sess.cpu()
    m = GraphModule(lib["default"](dev))
    params = set(json.loads(lib["get_graph_param_names"]()))
    inputs = _inputs(args, m, params)
    m.set_input(None, None, **inputs)
    m.run()
    outputs = [m.get_output(i).numpy() for i in range(m.get_num_outputs())]
    for i, out in enumerate(outputs):
        print(f"output {i}: shape {out.shape} {out.dtype}, mean {float(np.mean(out)):.6g}")
    if args.outputs:
        named: dict[str, Any] = {f"output_{i}": o for i, o in enumerate(outputs)}
        np.savez(args.outputs, **named)
    if args.print_top:
        _print_top(outputs[0], args.print_top)
    if args.print_time:
        result = m.benchmark(dev, repeat=args.repeat, number=args.number)
        where = "remote " if sess is not None else ""
        print(f"{where}time (ms): {result}")
    if args.profile:
        _profile(lib, dev, inputs)
    if args.compare:
        _compare(args.compare, inputs, outputs)
    return 0


def _print_top(out: np.ndarray, n: int) -> None:
    flat = out.reshape(out.shape[0], -1)[0] if out.ndim > 1 else out
    order = np.argsort(flat)[::-1][:n]
    print("top " + str(n) + ": " + ", ".join(f"{int(i)} ({float(flat[i]):.4g})" for i in order))


def _profile(lib: Any, dev: Any, inputs: dict[str, np.ndarray]) -> None:
    from pytvm.runtime.graph_executor import debug_executor

    m = debug_executor.create(lib["get_graph_json"](), lib, dev)
    m.module["load_params"](lib["get_graph_params"]())
    m.set_input(None, None, **inputs)
    print(m.profile(number=3).table(top=20))


def _compare(model: str, inputs: dict[str, np.ndarray], outputs: list[np.ndarray]) -> None:
    try:
        import onnxruntime
    except ImportError:
        raise TVMValueError("--compare needs onnxruntime (pip install onnxruntime)") from None
    session = onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"])
    expected = session.run(None, inputs)
    if len(expected) != len(outputs):
        raise TVMValueError(f"{model} has {len(expected)} outputs, the module {len(outputs)}")
    for i, (ours, ref) in enumerate(zip(outputs, expected, strict=True)):
        diff = np.abs(ours.astype(np.float64) - ref.astype(np.float64))
        rel = diff / np.maximum(np.abs(ref.astype(np.float64)), 1e-12)
        print(
            f"output {i} vs ONNX Runtime: max abs error {float(diff.max()):.3g}, "
            f"max rel error {float(rel.max()):.3g}"
        )
