"""Models on a Cortex-M4 (QEMU's mps2-an386): flash and RAM, instructions per inference, and the
host latency of the same C, all measured.

Per model (``cnn_small`` of models/make_models.py; ``kws_cnn``, ``person_detect_cnn`` and
their int8 QDQ versions of models/make_mcu_models.py) the AOT executor's C (``relay.build``
with ``Executor("aot")`` for ``c -mcpu=cortex-m4``) is built into examples/bundle's standalone
program (main.c + the model's C + the board's startup, no runtime), for the board and for this
machine; a model that fails to build or run is listed with its error:

1. memory: ``pytvm.micro.memory_report`` (the model's objects compiled alone, ``-Os``: code,
   weights, workspace, I/O, static stack depth) and the linked board image's sections
   (``arm-none-eabi-size -A`` of bundle.elf, ``-O2``: flash = .text + .rodata + .data +
   exception tables; RAM = .data + .bss, the 64 KiB stack reservation not counted) with the
   stack the image used (main.c paints the stack and reads the high-water mark);
2. instructions per inference: the bundle run in QEMU with ``-icount shift=0`` (one
   instruction per ns of virtual time; the board's SysTick clock read around
   ``tvmgen_default_run``, 40 ns ticks), and, where ``pytvm.micro.Session`` serves the
   ``qemu-cortex-m4`` template, the time evaluator on the device through the AOT executor
   (virtual ns = instructions) as a cross-check;
3. host latency: the same C built with this machine's ``cc -O2`` (scalar C: the target's
   kernels are generic C), best of repeated runs pinned with ``taskset -c 1`` (the second
   usable core), beside ONNX Runtime (1 thread, this process pinned to that core).

TVM v0.18 (the last TVM with microTVM and the AOT executor; the package index offers only
apache-tvm 0.27) is measured beside pytvm by ``bench/micro_tvm018.py`` given an interpreter that
imports a TVM v0.18 built from source.
Run: ``python bench/micro.py`` (``--only kws_cnn``; ``--no-session`` skips the Session figures;
``--quick``: a smoke run).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
from _harness import REPO, best_ms, cpu_model

BUNDLE = REPO / "examples" / "bundle"
MODELS = ("cnn_small", "kws_cnn", "person_detect_cnn", "kws_cnn_int8", "person_detect_cnn_int8")
# core 1 (the second usable core) unless this process may run on one core only
_CORES = sorted(os.sched_getaffinity(0))
HOST_CORE = str(_CORES[1] if len(_CORES) > 1 else _CORES[0])
NO_TVM018 = (
    "TVM v0.18: not measured here (apache-tvm 0.27 has no microTVM); bench/micro_tvm018.py "
    "compares with a TVM v0.18 built from source"
)


def _load(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


build_model = _load("build_model", BUNDLE / "build_model.py")
run_bundle = _load("run_bundle", BUNDLE / "run_bundle.py")


def _make(out: Path, model: str, *goals: str) -> None:
    argv = ["make", "-s", "-C", str(BUNDLE), *goals, f"MODEL={model}", f"OUT={out}"]
    done = subprocess.run(
        [*argv, f"PYTHON={sys.executable}"], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed:\n{done.stdout}\n{done.stderr}")


def image_sections(elf: Path) -> dict[str, int]:
    """Section sizes of an ELF (``arm-none-eabi-size -A``)."""
    text = subprocess.run(
        ["arm-none-eabi-size", "-A", str(elf)], capture_output=True, text=True, check=True
    ).stdout
    sizes: dict[str, int] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0].startswith(".") and parts[1].isdigit():
            sizes[parts[0]] = int(parts[1])
    return sizes


def image_memory(elf: Path) -> tuple[int, int]:
    """``(flash, ram)`` bytes of a board image, the stack reservation left out."""
    s = image_sections(elf)
    flash_sections = (".text", ".rodata", ".ARM.extab", ".ARM.exidx", ".data")
    flash = sum(s.get(name, 0) for name in flash_sections)
    ram = s.get(".data", 0) + s.get(".bss", 0)
    return flash, ram


def ort_ms(model: Any, name: str, x: np.ndarray, seconds: float) -> float:
    """ONNX Runtime's best latency in ms, 1 thread, this process pinned to HOST_CORE."""
    import onnxruntime

    opts = onnxruntime.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    sess = onnxruntime.InferenceSession(
        model.SerializeToString(), opts, providers=["CPUExecutionProvider"]
    )
    saved = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {int(HOST_CORE)})
    try:
        return float(best_ms(lambda: sess.run(None, {name: x}), seconds))
    finally:
        os.sched_setaffinity(0, saved)


def session_figures(
    factory: Any, x: np.ndarray, expected: np.ndarray, work: Path, atol: float
) -> tuple[str, str, str]:
    """Instructions per inference from the device's time evaluator (``-icount shift=0``)
    through ``pytvm.micro.Session`` and the AOT executor, and the flash and RAM of that board
    image (CRT + MinRPC + serial framing + the model; ``image.size`` of the board build), or
    why there are no figures.
    """
    from pytvm import micro

    project = micro.generate_project(
        micro.get_microtvm_template_projects("qemu-cortex-m4"),
        factory,
        work / "project",
        {"icount_shift": 0},
    )
    project.build()
    project.flash()
    fields = dict(
        item.split("=", 1)
        for item in next((work / "project" / "build" / "board").glob("*/image.size"))
        .read_text()
        .split()
        if "=" in item
    )
    with micro.Session(transport_context_manager=project.transport()) as sess:
        aot = sess.create_aot_executor()
        aot.set_input(0, x)
        aot.run()
        got = aot.get_output(0).numpy()
        if not np.allclose(got, expected, rtol=1e-4, atol=atol):
            return "n/a (outputs differ from onnxruntime)", "", ""
        timer = aot.module.time_evaluator("run", sess.device, number=1, repeat=3)
        instructions = f"{round(min(timer().results) * 1e9):,}"
    return instructions, f"{int(fields['flash']):,}", f"{int(fields['ram']):,}"


def measure(name: str, work: Path, use_session: bool, quick: bool = False) -> dict[str, Any]:
    """Every figure of one model."""
    import pytvm.micro

    out = work / name
    with contextlib.redirect_stdout(io.StringIO()):
        factory = build_model.build(name, out)
    model, inp, x = build_model.load_model(name, 1)
    report = pytvm.micro.memory_report(factory, "mps2-an386", crt=None)
    by_name = {(s.name, s.memory): s.nbytes for s in report.sections}
    _make(out, name, "host", "qemu")
    flash, ram = image_memory(out / "qemu" / "bundle.elf")
    qemu = run_bundle.run_qemu(out, icount_shift=0)
    expected = np.load(out / "expected_output.npy")
    atol = run_bundle.tolerance(out)
    if not np.allclose(qemu.outputs[0].reshape(expected.shape), expected, rtol=1e-4, atol=atol):
        raise RuntimeError(f"{name}: the bundle's outputs in QEMU differ from onnxruntime")
    host = run_bundle.run_host(out, repeat=5 if quick else 200, cores=HOST_CORE)
    macs = _load("make_mcu_models", REPO / "models" / "make_mcu_models.py").count_macs(model)
    session = ("skipped", "", "")
    if use_session:
        session = session_figures(factory, x, expected, out, atol)
    return {
        "macs": macs,
        "code": by_name.get(("code", "flash"), 0),
        "weights": by_name.get(("weights", "flash"), 0),
        "workspace": by_name.get(("workspace", "ram"), 0),
        "io": by_name.get(("io", "ram"), 0),
        "stack_static": by_name.get(("stack", "ram"), 0),
        "image_flash": flash,
        "image_ram": ram,
        "stack_used": qemu.stack_bytes or 0,
        "instructions": qemu.best_ns,
        "session": session[0],
        "session_flash": session[1],
        "session_ram": session[2],
        "host_us": host.best_ns / 1e3,
        "ort_us": ort_ms(model, inp, x, 0.1 if quick else 1.0) * 1e3,
    }


def main(argv: list[str] | None = None) -> int:
    """Measure and print the tables."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--only", default="", help="comma-separated subset of " + ",".join(MODELS))
    ap.add_argument("--no-session", action="store_true", help="skip the Session cross-check")
    ap.add_argument("--keep", type=Path, help="build here and keep the files")
    ap.add_argument("-q", "--quick", action="store_true", help="smoke run: few host runs")
    args = ap.parse_args(argv)
    names = [n for n in args.only.split(",") if n] or list(MODELS)
    for tool in ("arm-none-eabi-gcc", "qemu-system-arm"):
        if shutil.which(tool) is None:
            print(
                f"{tool} is not installed: nothing to measure (Debian: gcc-arm-none-eabi, "
                "qemu-system-arm)"
            )
            return 1
    print(f"host CPU: {cpu_model()}; host runs pinned to core {HOST_CORE}")
    print("board: QEMU mps2-an386 (Cortex-M4F), -icount shift=0: 1 instruction = 1 ns")
    with tempfile.TemporaryDirectory() as tmp:
        work = args.keep or Path(tmp)
        rows: dict[str, dict[str, Any]] = {}
        failed: dict[str, str] = {}
        for n in names:
            try:
                rows[n] = measure(n, work, not args.no_session, args.quick)
            except Exception as err:  # a model that fails is reported, the others measured
                failed[n] = f"{type(err).__name__}: {str(err).splitlines()[0][:300]}"
    print()
    print("memory (bytes): the model's objects (pytvm.micro.memory_report, -Os) and the linked")
    print("bundle image (arm-none-eabi-size, -O2; RAM without the 64 KiB stack reservation)")
    head = (
        f"{'model':18} {'MACs':>10} {'code':>8} {'weights':>9} {'workspace':>9} {'io':>7}"
        f" {'stack*':>7} | {'img flash':>9} {'img RAM':>9} {'stack used':>10}"
    )
    print(head)
    for n, r in rows.items():
        print(
            f"{n:18} {r['macs']:>10,} {r['code']:>8,} {r['weights']:>9,} {r['workspace']:>9,}"
            f" {r['io']:>7,} {r['stack_static']:>7,} | {r['image_flash']:>9,}"
            f" {r['image_ram']:>9,} {r['stack_used']:>10,}"
        )
    print("  stack*: static depth of the run function and its kernels (GCC call graph)")
    if not args.no_session:
        print()
        print("the Session's board image (qemu-cortex-m4 project: CRT + MinRPC + serial framing +")
        print("AOT executor + the model; RAM with the CRT pool and the stack board.mk sets)")
        print(f"{'model':18} {'flash':>10} {'RAM':>10}")
        for n, r in rows.items():
            print(f"{n:18} {r['session_flash']:>10} {r['session_ram']:>10}")
    print()
    print("speed: instructions per inference in QEMU and host latency of the same C")
    print(
        f"{'model':18} {'instr (bundle)':>15} {'instr/MAC':>9} {'instr (Session)':>16}"
        f" {'host C us':>10} {'ORT us':>8}"
    )
    for n, r in rows.items():
        print(
            f"{n:18} {r['instructions']:>15,} {r['instructions'] / r['macs']:>9.2f}"
            f" {r['session']:>16} {r['host_us']:>10.1f} {r['ort_us']:>8.1f}"
        )
    for n, why in failed.items():
        print(f"{n}: not measured: {why}")
    print()
    print(NO_TVM018)
    return 0


if __name__ == "__main__":
    sys.exit(main())
