"""``pytvm micro``: run a Model Library Format model on a board, and check it fits a memory map.

In the style of TVM's ``tvmc micro`` / ``tvmc run --device micro``::

    pytvm micro run model.tar --board qemu-cortex-m4 --inputs x.npz --compare model.onnx
    pytvm micro memory model.tar --map stm32f4

``run`` builds a project from the archive (template ``host``: a process over pipes;
``qemu-cortex-m4``: the MPS2-AN386 board in QEMU), flashes it, opens a ``Session``, runs the
model through ``create_aot_executor()`` and prints its outputs; with ``--compare`` it runs
ONNX Runtime on the same inputs and exits with status 3 when an output differs past
``--atol`` + ``--rtol`` * |expected|. ``memory`` prints the memory report and exits with
status 4 when the model does not fit.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from pytvm.cli._npz_inputs import read_inputs
from pytvm.ffi.errors import TVMValueError

__all__ = ["EXIT_MISMATCH", "EXIT_NO_FIT", "add_parser", "run"]

#: Exit status of ``micro run --compare`` when an output differs from ONNX Runtime's.
EXIT_MISMATCH = 3
#: Exit status of ``micro memory`` when the model does not fit the map.
EXIT_NO_FIT = 4
BOARDS = ("host", "qemu-cortex-m4")


def add_parser(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    """Register ``micro`` and its commands on ``subparsers`` and return its parser."""
    parser = subparsers.add_parser(
        "micro",
        help="run a Model Library Format model on a board; check it fits a memory map",
        description="Models on microcontrollers (TVM's tvmc micro).",
    )
    commands = parser.add_subparsers(dest="micro_command", metavar="COMMAND", required=True)
    run_p = commands.add_parser(
        "run",
        help="build, flash and run an MLF model on a board",
        description="Build a project for --board from the archive, flash it, run the model "
        "through the AOT executor and print its outputs.",
    )
    run_p.add_argument(
        "mlf", help="the Model Library Format tar (pytvm compile --output-format mlf)"
    )
    run_p.add_argument("--board", choices=BOARDS, default="host", help="the project template")
    run_p.add_argument("--inputs", help=".npz of the inputs by name (default: random normal)")
    run_p.add_argument("-o", "--outputs", help="write the outputs to this .npz")
    run_p.add_argument("--print-top", type=int, metavar="N", help="print output 0's top N")
    run_p.add_argument(
        "--compare", metavar="MODEL.onnx", help="run ONNX Runtime on the same inputs and compare"
    )
    run_p.add_argument("--atol", type=float, default=1e-4, help="absolute tolerance of --compare")
    run_p.add_argument("--rtol", type=float, default=1e-3, help="relative tolerance of --compare")
    run_p.add_argument(
        "--project-dir", help="generate the project here and keep it (default: a temporary one)"
    )
    run_p.add_argument(
        "--project-option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a project option (repeatable), e.g. verbose=1",
    )
    memory = commands.add_parser(
        "memory",
        help="flash and RAM per section against a board's memory map",
        description="Measure the model's code, weights, workspace, I/O, stack and the C "
        "runtime and place them in a memory map (a built-in name or a JSON file).",
    )
    memory.add_argument("mlf", help="the Model Library Format tar")
    memory.add_argument(
        "--map",
        default="mps2-an386",
        help="memory map: mps2-an386, stm32f4, nrf52840 or a JSON file of regions",
    )
    memory.add_argument(
        "--crt",
        choices=("minimal", "full", "none"),
        default="minimal",
        help="the C runtime image counted beside the model",
    )
    return parser


def _option_value(text: str) -> Any:
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    if text.lstrip("-").isdigit():
        return int(text)
    return text


def _options(pairs: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise TVMValueError(f"--project-option {pair!r}: write KEY=VALUE")
        out[key] = _option_value(value)
    return out


def _inputs(args: argparse.Namespace, mlf: Any) -> dict[str, np.ndarray]:
    shapes = {t.name: t.shape for t in mlf.inputs}
    dtypes = {t.name: t.dtype for t in mlf.inputs}
    if args.inputs:
        return read_inputs(args.inputs, shapes, dtypes, required=shapes)
    rng = np.random.default_rng(0)
    print("no --inputs: using random normal inputs (seed 0)", file=sys.stderr)
    return {t.name: rng.standard_normal(t.shape).astype(t.dtype) for t in mlf.inputs}


def _run_on_board(
    args: argparse.Namespace, project_dir: Path, inputs: dict[str, np.ndarray]
) -> list[np.ndarray]:
    from pytvm import micro

    project = micro.generate_project_from_mlf(
        args.board, str(project_dir), args.mlf, _options(args.project_option)
    )
    project.build()
    project.flash()
    with micro.Session(transport_context_manager=project.transport()) as sess:
        executor = sess.create_aot_executor()
        for name, value in inputs.items():
            executor.set_input(name, value)
        executor.run()
        return [executor.get_output(i).numpy() for i in range(executor.get_num_outputs())]


def _print_top(out: np.ndarray, n: int) -> None:
    flat = out.reshape(-1)
    order = np.argsort(flat)[::-1][:n]
    print(f"top {n}: " + ", ".join(f"{int(i)} ({float(flat[i]):.4g})" for i in order))


def _compare(
    model: str, inputs: dict[str, np.ndarray], outputs: list[np.ndarray], atol: float, rtol: float
) -> bool:
    try:
        import onnxruntime
    except ImportError:
        raise TVMValueError("--compare needs onnxruntime (pip install onnxruntime)") from None
    session = onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"])
    expected = session.run(None, inputs)
    if len(expected) != len(outputs):
        raise TVMValueError(
            f"{model} has {len(expected)} outputs, the model on the board {len(outputs)}"
        )
    same = True
    for i, (ours, ref) in enumerate(zip(outputs, expected, strict=True)):
        ref64, ours64 = np.asarray(ref, np.float64), np.asarray(ours, np.float64)
        if ref64.shape != ours64.shape:
            print(f"output {i}: shape {ours64.shape}, ONNX Runtime's {ref64.shape}: MISMATCH")
            same = False
            continue
        diff = np.abs(ours64 - ref64)
        ok = bool(np.all(diff <= atol + rtol * np.abs(ref64)))
        same = same and ok
        print(
            f"output {i} vs ONNX Runtime: max |diff| {float(diff.max(initial=0.0)):.3g} "
            f"(atol {atol:g}, rtol {rtol:g}): {'ok' if ok else 'MISMATCH'}"
        )
    return same


def _run(args: argparse.Namespace) -> int:
    from pytvm.micro.model_library_format import read_model_library_format

    mlf = read_model_library_format(args.mlf)
    inputs = _inputs(args, mlf)
    if args.project_dir:
        outputs = _run_on_board(args, Path(args.project_dir), inputs)
    else:
        with tempfile.TemporaryDirectory(prefix="pytvm-micro-") as tmp:
            outputs = _run_on_board(args, Path(tmp) / "project", inputs)
    for info, out in zip(mlf.outputs, outputs, strict=False):
        print(f"output {info.name}: shape {out.shape} {out.dtype}, mean {float(np.mean(out)):.6g}")
    if args.outputs:
        named: dict[str, Any] = {t.name: o for t, o in zip(mlf.outputs, outputs, strict=False)}
        np.savez(args.outputs, **named)
    if args.print_top:
        _print_top(outputs[0], args.print_top)
    if args.compare and not _compare(args.compare, inputs, outputs, args.atol, args.rtol):
        return EXIT_MISMATCH
    return 0


def _memory(args: argparse.Namespace) -> int:
    from pytvm.micro.memory_report import memory_report

    crt = None if args.crt == "none" else args.crt
    report = memory_report(args.mlf, args.map, check=False, crt=crt)
    print(report)
    return 0 if report.fits else EXIT_NO_FIT


def run(args: argparse.Namespace) -> int:
    """Run the ``micro`` command ``args.micro_command``."""
    return _run(args) if args.micro_command == "run" else _memory(args)


if __name__ == "__main__":
    from typing import cast

    from pytvm.cli import _command

    # Runs through the shared error handling without importing pytvm.cli.main.
    this = cast(_command.Subcommand, sys.modules[__name__])
    sys.exit(_command.main(["micro", *sys.argv[1:]], [this]))
