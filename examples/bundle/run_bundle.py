"""Run a built bundle on the host or in QEMU, read what it prints, compare with ONNX Runtime.

Run: ``python examples/bundle/run_bundle.py examples/bundle/build/kws_cnn [--qemu] [--icount]``
after ``make host`` / ``make qemu``. Prints the outputs' largest difference from
``expected_output.npy`` (written by build_model.py) and ``matches onnxruntime: True|False``
(within 1e-5, or one quantization step of an int8 model's output).

The bundle's output (main.c) is parsed line by line: ``output <i> "<name>": <n> x <dtype>``,
then ``<index> 0x<float32 bits> <value>`` per element (the bits are exact), ``top class: <k>``,
``bundle: best of <r> runs: <ns> ns``, on the board ``bundle: stack used <bytes> bytes`` and at
the end ``bundle: done status <s>``.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

QEMU_MACHINE = "mps2-an386"
TIMEOUT_S = 120.0

_OUTPUT = re.compile(r'^output (\d+) "(.*)": (\d+) x (\w+)$')
_FLOAT = re.compile(r"^\s+(\d+) 0x([0-9a-f]{8}) \S+$")
_INT = re.compile(r"^\s+(\d+) (-?\d+)$")
_BEST = re.compile(r"^bundle: best of (\d+) runs: (\d+) ns$")
_STACK = re.compile(r"^bundle: stack used (\d+) bytes$")
_TOP = re.compile(r"^top class: (\d+) ")
_DONE = re.compile(r"^bundle: done status (\d+)$")


@dataclass(frozen=True)
class BundleRun:
    """What one run of the bundle printed."""

    outputs: list[np.ndarray]
    top: int
    best_ns: int
    stack_bytes: int | None
    status: int
    text: str


def parse_output(text: str) -> BundleRun:
    """The outputs (exact, from the printed bits), top class, time and status of a bundle run."""
    outputs: list[list[float]] = []
    dtypes: list[str] = []
    top = best = status = -1
    stack: int | None = None
    for raw in text.splitlines():
        line = raw.rstrip("\r")
        if m := _OUTPUT.match(line):
            outputs.append([])
            dtypes.append(m.group(4))
        elif outputs and (m := _FLOAT.match(line)):
            bits = np.array([int(m.group(2), 16)], dtype=np.uint32)
            outputs[-1].append(float(bits.view(np.float32)[0]))
        elif outputs and (m := _INT.match(line)):
            outputs[-1].append(float(m.group(2)))
        elif m := _BEST.match(line):
            best = int(m.group(2))
        elif m := _STACK.match(line):
            stack = int(m.group(1))
        elif m := _TOP.match(line):
            top = int(m.group(1))
        elif m := _DONE.match(line):
            status = int(m.group(1))
    if status < 0:
        raise RuntimeError(
            f"the bundle did not finish (no 'bundle: done' line); it printed:\n{text}"
        )
    arrays = [np.array(v, dtype=d) for v, d in zip(outputs, dtypes, strict=True)]
    return BundleRun(arrays, top, best, stack, status, text)


def run_host(out: Path, repeat: int = 1, cores: str | None = None) -> BundleRun:
    """Run ``out/host/bundle`` (pinned with ``taskset -c cores`` when given)."""
    argv = [str(out / "host" / "bundle"), "--repeat", str(repeat)]
    if cores is not None:
        argv = ["taskset", "-c", cores, *argv]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{argv} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return parse_output(done.stdout)


def qemu_command(elf: Path, icount_shift: int | None = None) -> list[str]:
    """qemu-system-arm's command line for a bundle image: UART0 on stdout, semihosting exit."""
    argv = ["qemu-system-arm", "-M", QEMU_MACHINE, "-nographic", "-monitor", "none"]
    argv += ["-semihosting-config", "enable=on,target=native", "-serial", "stdio"]
    if icount_shift is not None:
        argv += ["-icount", f"shift={icount_shift}"]
    return [*argv, "-kernel", str(elf)]


def run_qemu(out: Path, icount_shift: int | None = None) -> BundleRun:
    """Run ``out/qemu/bundle.elf`` in QEMU until it exits through semihosting.

    With ``icount_shift=0`` the board's clock counts one ns per instruction, so the printed
    time is the run's instruction count.
    """
    if shutil.which("qemu-system-arm") is None:
        raise FileNotFoundError("qemu-system-arm is not installed (Debian: qemu-system-arm)")
    argv = qemu_command(out / "qemu" / "bundle.elf", icount_shift)
    # subprocess.run kills QEMU if the timeout passes
    done = subprocess.run(
        argv,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    run = parse_output(done.stdout)
    if done.returncode != run.status:
        raise RuntimeError(
            f"QEMU exited {done.returncode}, the bundle printed status {run.status}:\n"
            f"{done.stdout}\n{done.stderr}"
        )
    return run


def tolerance(out: Path) -> float:
    """The absolute tolerance against ONNX Runtime: 1e-5, or one quantization step of an int8
    model's output (``model.json``'s ``output_step``).
    """
    step = float(json.loads((out / "model.json").read_text()).get("output_step", 0.0))
    return max(1e-5, step * 1.001)


def main(argv: list[str] | None = None) -> int:
    """Run the bundle in ``OUT`` and compare its outputs with ONNX Runtime's."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("out", type=Path, help="the bundle's build directory (build/<model>)")
    ap.add_argument("--qemu", action="store_true", help="run the board image in QEMU")
    ap.add_argument("--icount", action="store_true", help="QEMU with -icount shift=0")
    ap.add_argument("--repeat", type=int, default=1, help="host runs (best time printed)")
    args = ap.parse_args(argv)
    if args.qemu:
        run = run_qemu(args.out, 0 if args.icount else None)
        where = "qemu " + QEMU_MACHINE + (" (-icount shift=0: ns = instructions)" * args.icount)
    else:
        run = run_host(args.out, args.repeat)
        where = "host"
    print(f"{where}: status {run.status}, top class {run.top}, best run {run.best_ns} ns")
    if run.stack_bytes is not None:
        print(f"stack used: {run.stack_bytes} bytes")
    expected_path = args.out / "expected_output.npy"
    if expected_path.is_file():
        expected = np.load(expected_path)
        got = run.outputs[0].reshape(expected.shape)
        print(f"largest difference from onnxruntime: {float(np.abs(got - expected).max()):.3g}")
        ok = bool(np.allclose(got, expected, rtol=1e-4, atol=tolerance(args.out)))
        print(f"matches onnxruntime: {ok}")
        return 0 if ok else 1
    return run.status


if __name__ == "__main__":
    sys.exit(main())
