"""Every script in ``examples/`` runs as a user runs it (``python examples/NAME.py``, from another
directory): it exits 0, prints what it shows, and leaves no process behind.

The examples start together, each in its own process session, so the module takes about as long
as the slowest one.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from pytvm.testing.rpc import wait_for

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
TIMEOUT = 120.0
HAS_TVM = importlib.util.find_spec("tvm") is not None

# example -> lines (or parts of lines) its output must contain
EXPECTED: dict[str, list[str]] = {
    "01_packed_kernel.py": [
        "vadd(a, a, c): c = [0.0, 2.0, 4.0, 6.0]",
        "time_evaluator: mean ",
        "call_python('example.add_one', 41) = 42",
        "vadd(a, a) raised TypeError: vadd(a, b, c) expects three arrays",
    ],
    "02_rpc_server_and_tracker.py": [
        "on remote[0]:cpu(0) -> [0. 1. 2. 3. 4. 5. 6. 7.]",
        "remote vadd(a, a, a) -> [ 0.  2.  4.  6.  8. 10. 12. 14.]",
        "remote time_evaluator: ",
        "direct: [1. 1. 1. 1.]",
        "nested: [0 1 2]",
        "servers and tracker stopped",
    ],
    "03_tvm_names.py": [
        "client with import pytvm as tvm:",
        "rpc.test.addone(41) = 42, testing.echo('hi') = hi",
        "runtime.tensor on the remote cpu: shape (2, 3), sum 15.0",
        "the server's error arrives as tvm.error.RPCError: ",
        *(["client with import tvm (apache-tvm 0.27"] if HAS_TVM else []),
    ],
    "04_accelerator.py": [
        "accelerator device: remote[0]:hexagon(0)",
        "A.numpy() = [2, 3]",
        "lies in the emulator's pool: True",
        "bytes there: 02 00 00 00 03 00 00 00",
        "device pid",  # the trace reaches the emulator process ...
        "TVMDeviceCopyDataFromTo",  # ... and its device API
        "board server and tracker stopped",
    ],
    "05_trace.py": [
        "server pid",
        "NDArray.copyfrom",
        "kCopyToRemote",
        "<Trace: ",
        "Chrome trace events",
    ],
    "06_load_tvm_module.py": (
        [
            "apache-tvm exported myadd.so",
            "local myadd matches numpy: True",
            "local time_evaluator: ",
            "remote myadd on remote[0]:cpu(0) matches numpy: True",
        ]
        if HAS_TVM
        else ["skipped: apache-tvm is not installed"]
    ),
    "07_tensor_compiler.py": [
        "primfn(A_1: handle, B_1: handle, C_1: handle) -> ()",
        "for (i.outer: int32, 0, 128) parallel {",
        "C[ramp((i.outer * 8), 1, 8)] = (exp(A[ramp((i.outer * 8), 1, 8)]) * B[",
        "// pytvm target: llvm",
        "matches numpy: True",
        "time_evaluator: mean ",
        "a wrong call raises ValueError: exp_mul: argument C: expected shape (1024,), got (1025,)",
        "topi matmul matches numpy: True",
    ],
    "08_onnx_model.py": [
        "imported: inputs ['x'], 7 params",
        "after the passes: 5 fused kernels (batch norm folded into conv1)",
        "output: shape (1, 10)",
        "matches ONNX Runtime: True",
        "latency: ",
        "fused_nn_conv2d_add_nn_relu",
        "memory plan (arena):",
    ],
    "09_microcontroller.py": [
        "AOT: 6 kernel calls, workspace ",
        "Model Library Format: codegen/host/include/tvmgen_default.h, "
        "codegen/host/src/default_lib0.c, codegen/host/src/default_lib1.c",
        "fits stm32f4: True" if shutil.which("qemu-system-arm") else "ran on host",
        "matches ONNX Runtime: True",
        "time on the device: ",
    ],
    "10_autotuning.py": [
        "tasks: 3 (",
        " measured, 0 more after a restart",
        "matches ONNX Runtime: True",
        "latency: untuned ",
    ],
}


@dataclass
class Run:
    """A finished example: its exit status, output, and processes of its session still alive."""

    returncode: int
    stdout: str
    stderr: str
    leftovers: list[int]


def _session_members(sid: int) -> list[int]:
    """Live (non-zombie) processes in process session ``sid``."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()  # state, ppid, pgrp, session, ...
        if int(fields[3]) == sid and fields[0] != "Z":
            members.append(int(entry.name))
    return members


def _start(argv: list[str], cwd: Path) -> subprocess.Popen[str]:
    # a session of its own: every process the example starts can be found afterwards
    return subprocess.Popen(
        argv,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def _finish(proc: subprocess.Popen[str]) -> Run:
    try:
        out, err = proc.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        out, err = proc.communicate()
        return Run(-9, out, err + f"\n(killed after {TIMEOUT:.0f} s)", [])
    try:
        # processes stopped by the example are reaped by it; give their exit a moment to land
        wait_for(lambda: not _session_members(proc.pid), "the example's processes", timeout=5)
    except AssertionError:
        pass
    leftovers = _session_members(proc.pid)
    for pid in leftovers:
        os.kill(pid, 9)
    return Run(proc.returncode, out, err, leftovers)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Run]]:
    """Every example, run at once from an empty directory."""
    cwd = tmp_path_factory.mktemp("examples_cwd")
    procs = {name: _start([sys.executable, str(EXAMPLES / name)], cwd) for name in sorted(EXPECTED)}
    yield {name: _finish(proc) for name, proc in procs.items()}


def test_every_example_has_a_smoke_test() -> None:
    assert sorted(p.name for p in EXAMPLES.glob("*.py")) == sorted(EXPECTED)


@pytest.mark.needs_cc
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example_runs_and_prints_its_results(runs: dict[str, Run], name: str) -> None:
    run = runs[name]
    assert run.returncode == 0, f"{name} exited {run.returncode}:\n{run.stdout}\n{run.stderr}"
    missing = [line for line in EXPECTED[name] if line not in run.stdout]
    assert not missing, f"{name} did not print {missing}:\n{run.stdout}"
    assert "Traceback" not in run.stderr, run.stderr
    assert not run.leftovers, f"{name} left processes running: {run.leftovers}"


def test_tvm_example_skips_cleanly_without_apache_tvm(tmp_path: Path) -> None:
    # sys.modules["tvm"] = None makes ``import tvm`` fail, as on a machine without apache-tvm
    code = (
        "import runpy, sys\n"
        "sys.modules['tvm'] = None\n"
        f"runpy.run_path({str(EXAMPLES / '06_load_tvm_module.py')!r}, run_name='__main__')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "skipped: apache-tvm is not installed (pip install apache-tvm builds the library)"
    ]
