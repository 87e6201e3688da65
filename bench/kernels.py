"""Kernel speed: pytvm's default schedules against numpy's BLAS, ONNX Runtime and apache-tvm.

Each peer runs in its own subprocess pinned with ``taskset`` to 1 or 2 cores (and told to use
that many threads), all in the same run; figures are GFLOP/s (best of several runs) plus the
machine's FMA peak measured by a small C kernel here, and pytvm's compile time per kernel
(lower + codegen + compiler, cold cache). pytvm builds each kernel through both backends of
``target="llvm"`` (generated C with the system C compiler, LLVM IR with llvmlite in process) in
the same worker; a second table puts them side by side, and the main table shows the default
backend. Run: ``make bench`` or ``python bench/kernels.py`` (quick: ``--min-seconds 0.05``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from _harness import run_worker

REPO = Path(__file__).resolve().parents[1]
PEERS = ("pytvm", "numpy", "onnxruntime", "tvm")
#: pytvm's two ways to build ``target="llvm"``: generated C + the system C compiler, and LLVM IR
#: compiled in process by llvmlite.
BACKENDS = ("c", "llvmlite")


@dataclass(frozen=True)
class Workload:
    """One kernel: its name, what it computes and its floating-point operation count."""

    name: str
    kind: str  # "matmul", "conv2d"
    shape: dict[str, int]

    @property
    def flops(self) -> float:
        """Floating-point operations of one run (a multiply-add counts two)."""
        s = self.shape
        if self.kind == "matmul":
            return 2.0 * s["m"] * s["n"] * s["k"]
        oh = (s["h"] + 2 * s["pad"] - s["kh"]) // s["stride"] + 1
        ow = (s["w"] + 2 * s["pad"] - s["kw"]) // s["stride"] + 1
        return 2.0 * s["co"] * oh * ow * (s["ci"] // s["groups"]) * s["kh"] * s["kw"]


WORKLOADS = (
    Workload("matmul 1024x1024x1024", "matmul", {"m": 1024, "n": 1024, "k": 1024}),
    Workload("matmul 128x768x768", "matmul", {"m": 128, "n": 768, "k": 768}),
    Workload(
        "conv3x3 1x64x56x56 k64",
        "conv2d",
        {
            "ci": 64,
            "h": 56,
            "w": 56,
            "co": 64,
            "kh": 3,
            "kw": 3,
            "pad": 1,
            "stride": 1,
            "groups": 1,
        },
    ),
    # The same layer as the graph compiler runs it: the constant kernel packed once at build
    # time (OIHW<fb>o, not timed), the product vectorized over output channels. The peers run
    # the layer as they always do.
    Workload(
        "conv3x3 packed weights",
        "conv2d",
        {
            "ci": 64,
            "h": 56,
            "w": 56,
            "co": 64,
            "kh": 3,
            "kw": 3,
            "pad": 1,
            "stride": 1,
            "groups": 1,
            "packed": 1,
        },
    ),
    Workload(
        "depthwise3x3 1x32x112x112",
        "conv2d",
        {
            "ci": 32,
            "h": 112,
            "w": 112,
            "co": 32,
            "kh": 3,
            "kw": 3,
            "pad": 1,
            "stride": 1,
            "groups": 32,
        },
    ),
)

# ----------------------------------------------------------------------------- inputs


def _inputs(w: Workload) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    s = w.shape
    if w.kind == "matmul":
        return [
            rng.standard_normal((s["m"], s["k"]), dtype=np.float32),
            rng.standard_normal((s["k"], s["n"]), dtype=np.float32),
        ]
    return [
        rng.standard_normal((1, s["ci"], s["h"], s["w"]), dtype=np.float32),
        rng.standard_normal((s["co"], s["ci"] // s["groups"], s["kh"], s["kw"]), dtype=np.float32),
    ]


def _best(run: Callable[[], object], min_seconds: float, max_runs: int = 50) -> float:
    run()  # warm up
    best, spent, runs = float("inf"), 0.0, 0
    while runs < max_runs and (spent < min_seconds or runs < 3):
        start = time.perf_counter()
        run()
        took = time.perf_counter() - start
        best, spent, runs = min(best, took), spent + took, runs + 1
        if took > min_seconds:  # a slow peer: its first timed run decides
            break
    return best


# ----------------------------------------------------------------------------- peers


def _numpy(w: Workload, threads: int, opts: argparse.Namespace) -> dict[str, Any]:
    if w.kind != "matmul":
        return {"note": "no conv in numpy"}
    a, b = _inputs(w)
    return {"seconds": _best(lambda: a @ b, opts.min_seconds)}


def _onnx_model(w: Workload) -> Any:
    from onnx import TensorProto, helper, numpy_helper

    s = w.shape
    if w.kind == "matmul":
        node = helper.make_node("MatMul", ["A", "B"], ["C"])
        inputs = [
            helper.make_tensor_value_info("A", TensorProto.FLOAT, [s["m"], s["k"]]),
            helper.make_tensor_value_info("B", TensorProto.FLOAT, [s["k"], s["n"]]),
        ]
        inits = []
    else:
        weight = _inputs(w)[1]
        node = helper.make_node(
            "Conv",
            ["X", "W"],
            ["Y"],
            pads=[s["pad"]] * 4,
            strides=[s["stride"]] * 2,
            group=s["groups"],
            kernel_shape=[s["kh"], s["kw"]],
        )
        inputs = [
            helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, s["ci"], s["h"], s["w"]])
        ]
        inits = [numpy_helper.from_array(weight, "W")]
    out = helper.make_tensor_value_info(node.output[0], TensorProto.FLOAT, None)
    graph = helper.make_graph([node], "bench", inputs, [out], initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def _onnxruntime(w: Workload, threads: int, opts: argparse.Namespace) -> dict[str, Any]:
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(_onnx_model(w), so, providers=["CPUExecutionProvider"])
    data = _inputs(w)
    feeds = {i.name: data[k] for k, i in enumerate(sess.get_inputs())}
    return {"seconds": _best(lambda: sess.run(None, feeds), opts.min_seconds)}


def _tvm(w: Workload, threads: int, opts: argparse.Namespace) -> dict[str, Any]:
    import tvm
    from tvm import te, topi

    s = w.shape
    if w.kind == "matmul":
        a = te.placeholder((s["m"], s["k"]), name="A")
        b = te.placeholder((s["k"], s["n"]), name="B")
        k = te.reduce_axis((0, s["k"]), name="k")
        c = te.compute((s["m"], s["n"]), lambda i, j: te.sum(a[i, k] * b[k, j], axis=k), name="C")
        args = [a, b, c]
    else:
        x = te.placeholder((1, s["ci"], s["h"], s["w"]), name="X")
        wt = te.placeholder((s["co"], s["ci"] // s["groups"], s["kh"], s["kw"]), name="W")
        if s["groups"] == 1:
            y = topi.nn.conv2d_nchw(x, wt, s["stride"], s["pad"], 1)
        else:
            dw = te.placeholder((s["ci"], 1, s["kh"], s["kw"]), name="W")
            y = topi.nn.depthwise_conv2d_nchw(x, dw, s["stride"], s["pad"], 1)
            wt = dw
        args = [x, wt, y]
    start = time.perf_counter()
    lib = tvm.compile(te.create_prim_func(args), target="llvm").jit()
    compile_s = time.perf_counter() - start
    dev = tvm.cpu()
    arrays = [tvm.runtime.tensor(v, dev) for v in _inputs(w)]
    out = tvm.runtime.empty([int(d) for d in args[-1].shape], "float32", dev)
    timer = lib.time_evaluator(lib.entry_name, dev, number=1, repeat=1 if w.flops > 1e9 else 3)
    seconds = min(timer(*arrays, out).results)
    return {"seconds": seconds, "compile_s": compile_s}


def _pytvm_schedule(w: Workload, target: str) -> tuple[Any, list[Any]]:
    import pytvm
    from pytvm import te, topi

    s = w.shape
    with pytvm.target.Target(target):
        if w.kind == "matmul":
            a = te.placeholder((s["m"], s["k"]), name="A")
            b = te.placeholder((s["k"], s["n"]), name="B")
            c = topi.nn.matmul(a, b)
            return topi.x86.schedule_matmul([c]), [a, b, c]
        x = te.placeholder((1, s["ci"], s["h"], s["w"]), name="X")
        if s.get("packed"):
            fb = topi.x86.conv2d_channel_block(s["co"], "float32")
            assert fb is not None
            shape = (s["co"] // fb, s["ci"], s["kh"], s["kw"], fb)
            wp = te.placeholder(shape, name="W")
            y = topi.nn.conv2d_nchw_packed(x, wp, s["stride"], s["pad"], 1)
            return topi.x86.schedule_conv2d_nchw_packed([y]), [x, wp, y]
        if s["groups"] == 1:
            wt = te.placeholder((s["co"], s["ci"], s["kh"], s["kw"]), name="W")
            y = topi.nn.conv2d_nchw(x, wt, s["stride"], s["pad"], 1)
            return topi.x86.schedule_conv2d_nchw([y]), [x, wt, y]
        wt = te.placeholder((s["ci"], 1, s["kh"], s["kw"]), name="W")
        y = topi.nn.depthwise_conv2d_nchw(x, wt, s["stride"], s["pad"], 1)
        return topi.x86.schedule_depthwise_conv2d_nchw([y]), [x, wt, y]


def _warm_up(target: str) -> None:
    """Build one tiny kernel, so a backend's one-time start-up is not charged to a workload."""
    import pytvm
    from pytvm import te

    a = te.placeholder((8,), name="A")
    b = te.compute((8,), lambda i: a[i] + 1.0, name="B")
    with tempfile.TemporaryDirectory() as cache:
        pytvm.build(te.create_schedule(b.op), [a, b], target=target, name="warm", cache_dir=cache)


def _pytvm_backend(w: Workload, backend: str, opts: argparse.Namespace) -> dict[str, Any]:
    import pytvm

    target = f"llvm -mcpu=native -backend={backend}"
    sched, args = _pytvm_schedule(w, target)
    with tempfile.TemporaryDirectory() as cache:  # a cold cache: the compiler really runs
        start = time.perf_counter()
        lib = pytvm.build(sched, args, target=target, name="kernel", cache_dir=cache)
        compile_s = time.perf_counter() - start
    dev = pytvm.cpu()
    data = _inputs(w)
    if w.shape.get("packed"):  # the kernel in the layout the schedule reads, made once
        co, ci, kh, kw = data[1].shape
        fb = int(args[1].shape[-1])
        data = [data[0], data[1].reshape(co // fb, fb, ci, kh, kw).transpose(0, 2, 3, 4, 1)]
    arrays = [pytvm.nd.array(np.ascontiguousarray(v), dev) for v in data]
    out = pytvm.nd.empty([int(d) for d in args[-1].shape], "float32", dev)
    lib["kernel"](*arrays, out)
    expected = _reference(w, _inputs(w))
    if not np.allclose(out.numpy(), expected, rtol=1e-3, atol=1e-3):
        return {"note": f"WRONG RESULT ({backend} backend)"}
    seconds = _best(lambda: lib["kernel"](*arrays, out), opts.min_seconds)
    return {"seconds": seconds, "compile_s": compile_s}


def _pytvm(w: Workload, threads: int, opts: argparse.Namespace) -> dict[str, Any]:
    """Both backends of ``target="llvm"`` in turn; the row's figure is the default backend's."""
    from pytvm.target import Target

    backends = {}
    for backend in BACKENDS:
        _warm_up(f"llvm -backend={backend}")
        backends[backend] = _pytvm_backend(w, backend, opts)
    default = Target("llvm").backend
    return {**backends[default], "backends": backends, "default": default}


def _reference(w: Workload, data: list[np.ndarray]) -> np.ndarray:
    if w.kind == "matmul":
        return np.asarray(data[0] @ data[1])
    import onnxruntime as ort

    sess = ort.InferenceSession(_onnx_model(w), providers=["CPUExecutionProvider"])
    return np.asarray(sess.run(None, {sess.get_inputs()[0].name: data[0]})[0])


_RUNNERS: dict[str, Callable[[Workload, int, argparse.Namespace], dict[str, Any]]] = {
    "pytvm": _pytvm,
    "numpy": _numpy,
    "onnxruntime": _onnxruntime,
    "tvm": _tvm,
}

# ----------------------------------------------------------------------------- FMA peak

_PEAK_C = r"""
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#if defined(__AVX512F__)
#define LANES 16
#elif defined(__AVX__)
#define LANES 8
#else
#define LANES 4
#endif
#define ACC 12
typedef float vec __attribute__((vector_size(LANES * 4)));
static long iters;
/* Twelve independent multiply-add chains (more than FMA latency x ports on these CPUs), kept in
 * registers: the loop body is written out, so the compiler cannot spill them. */
#define STEP(x) x = x * a + b
static void* run(void* out) {
  vec a, b, x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11;
  for (int i = 0; i < LANES; ++i) { a[i] = 1.0f - 1e-7f * i; b[i] = 1e-7f; }
  x0 = b; x1 = b * 2; x2 = b * 3; x3 = b * 4; x4 = b * 5; x5 = b * 6;
  x6 = b * 7; x7 = b * 8; x8 = b * 9; x9 = b * 10; x10 = b * 11; x11 = b * 12;
  for (long n = 0; n < iters; ++n) {
    STEP(x0); STEP(x1); STEP(x2); STEP(x3); STEP(x4); STEP(x5);
    STEP(x6); STEP(x7); STEP(x8); STEP(x9); STEP(x10); STEP(x11);
  }
  vec acc = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7 + x8 + x9 + x10 + x11;
  float s = 0;
  for (int i = 0; i < LANES; ++i) s += acc[i];
  *(float*)out = s;
  return NULL;
}
int main(int argc, char** argv) {
  int threads = atoi(argv[1]);
  iters = atol(argv[2]);
  pthread_t t[64]; float sink[64];
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int i = 0; i < threads; ++i) pthread_create(&t[i], NULL, run, &sink[i]);
  for (int i = 0; i < threads; ++i) pthread_join(t[i], NULL);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double s = (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec);
  printf("%f %d %g\n", 2.0 * LANES * ACC * iters * threads / s / 1e9, LANES, (double)sink[0]);
  return 0;
}
"""


def _fma_peak(threads: int, cores: str) -> tuple[float, int]:
    """Measured single-precision FMA GFLOP/s on ``threads`` threads, and the vector lanes."""
    cc = os.environ.get("CC") or "cc"
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = Path(tmp) / "peak.c", Path(tmp) / "peak"
        src.write_text(_PEAK_C)
        subprocess.run(
            [
                cc,
                "-O2",
                "-march=native",
                "-ffp-contract=fast",
                "-pthread",
                str(src),
                "-o",
                str(exe),
            ],
            check=True,
        )
        best, lanes = 0.0, 0
        for _ in range(3):
            out = subprocess.run(
                ["taskset", "-c", cores, str(exe), str(threads), "40000000"],
                capture_output=True,
                text=True,
                check=True,
            ).stdout.split()
            best, lanes = max(best, float(out[0])), int(out[1])
    return best, lanes


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


# ----------------------------------------------------------------------------- driver


def _worker(peer: str, threads: int, opts: argparse.Namespace) -> None:
    results = {}
    for w in WORKLOADS:
        if opts.only and opts.only not in w.name:
            continue
        try:
            results[w.name] = _RUNNERS[peer](w, threads, opts)
        except Exception as err:
            results[w.name] = {"note": f"error: {type(err).__name__}: {str(err)[:120]}"}
    print(json.dumps(results))


def _run_peer(peer: str, threads: int, cores: str, opts: argparse.Namespace) -> dict[str, Any]:
    argv = [sys.executable, __file__, "--worker", peer, "--threads", str(threads)]
    argv += ["--min-seconds", str(opts.min_seconds)] + (["--only", opts.only] if opts.only else [])
    result = run_worker(argv, threads, cores)
    return {"error": result} if isinstance(result, str) else result


def _cell(result: dict[str, Any] | None, flops: float) -> str:
    if not result or "seconds" not in result:
        return "n/a"
    return f"{flops / result['seconds'] / 1e9:.1f}"


def _print_backends(
    table: dict[int, dict[str, dict[str, Any]]], thread_counts: list[int], opts: argparse.Namespace
) -> None:
    """The two backends of pytvm's ``target="llvm"`` side by side: compile time and speed."""
    default = ""
    print("\npytvm target='llvm' by backend (same run; compile: lower + codegen + compiler, cold)")
    head = f"{'kernel':28} {'thr':>3} {'C GFLOP/s':>10} {'LLVM GFLOP/s':>12} {'LLVM/C':>7}"
    print(head + f" {'C compile s':>11} {'LLVM compile s':>14}")
    for w in WORKLOADS:
        if opts.only and opts.only not in w.name:
            continue
        for threads in thread_counts:
            res = table[threads]["pytvm"].get(w.name) or {}
            default = res.get("default", default)
            by = res.get("backends", {})
            c, ll = by.get("c", {}), by.get("llvmlite", {})
            speed = (
                f"{c['seconds'] / ll['seconds']:.2f}"
                if "seconds" in c and "seconds" in ll
                else "n/a"
            )
            times = [f"{r['compile_s']:.2f}" if "compile_s" in r else "n/a" for r in (c, ll)]
            line = f"{w.name:28} {threads:>3} {_cell(c, w.flops):>10} {_cell(ll, w.flops):>12}"
            print(line + f" {speed:>7} {times[0]:>11} {times[1]:>14}")
    if default:
        print(f"The pytvm column of the first table is the default backend of 'llvm': {default}.")


def main() -> None:
    """Measure every peer on 1 and 2 cores; print the table with ratios and the FMA peak."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--worker", choices=PEERS, help=argparse.SUPPRESS)
    parser.add_argument("--threads", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--min-seconds", type=float, default=1.0, help="timing budget per cell")
    parser.add_argument("--only", default="", help="run the workloads whose name contains this")
    parser.add_argument("--peers", default=",".join(PEERS), help="comma-separated peers to run")
    opts = parser.parse_args()
    if opts.worker:
        _worker(opts.worker, opts.threads, opts)
        return
    if shutil.which("taskset") is None:
        sys.exit("bench/kernels.py needs taskset (util-linux) to pin each peer")
    allowed = sorted(os.sched_getaffinity(0))
    thread_counts = [1, 2] if len(allowed) >= 2 else [1]
    print(f"CPU: {_cpu_name()} ({len(allowed)} cores usable)")
    table: dict[int, dict[str, dict[str, Any]]] = {}
    for threads in thread_counts:
        cores = ",".join(str(c) for c in allowed[:threads])
        peak, lanes = _fma_peak(threads, cores)
        print(f"FMA peak, {threads} thread(s): {peak:.1f} GFLOP/s (fp32, {lanes} lanes)")
        table[threads] = {p: _run_peer(p, threads, cores, opts) for p in opts.peers.split(",")}
    peers = opts.peers.split(",")
    print()
    head = f"{'kernel':28} {'thr':>3} " + " ".join(f"{p:>11}" for p in peers)
    print(head + f" {'/numpy':>7} {'/ORT':>7} {'/TVM':>7} {'compile s':>9}")
    for w in WORKLOADS:
        if opts.only and opts.only not in w.name:
            continue
        for threads in thread_counts:
            res = {p: table[threads][p].get(w.name) for p in peers}
            cells = [_cell(res[p], w.flops) for p in peers]
            ratios = []
            for other in ("numpy", "onnxruntime", "tvm"):
                mine, theirs = res.get("pytvm") or {}, res.get(other) or {}
                ok = "seconds" in mine and "seconds" in theirs
                ratios.append(f"{theirs['seconds'] / mine['seconds']:.2f}" if ok else "n/a")
            compile_s = (res.get("pytvm") or {}).get("compile_s")
            line = f"{w.name:28} {threads:>3} " + " ".join(f"{c:>11}" for c in cells)
            line += " " + " ".join(f"{r:>7}" for r in ratios)
            print(line + f" {compile_s:>9.2f}" if compile_s else line + f" {'n/a':>9}")
    print("\nGFLOP/s (higher is better); ratios are pytvm's speed over the peer's.")
    if "pytvm" in peers:
        _print_backends(table, thread_counts, opts)
    _print_notes(table, thread_counts, peers)


def _print_notes(
    table: dict[int, dict[str, dict[str, Any]]], thread_counts: list[int], peers: list[str]
) -> None:
    """What a peer (or one of pytvm's backends) could not measure, and why."""
    for threads in thread_counts:
        for peer in peers:
            for name, res in table[threads][peer].items():
                if not isinstance(res, dict):
                    continue
                parts = res.get("backends") or {"": res}  # pytvm: each backend's own
                for backend, one in parts.items():
                    if "note" in one:
                        who = f"{peer} {backend}".strip()
                        print(f"  {who} ({threads} thr) {name}: {one['note']}")
            if "error" in table[threads][peer]:
                print(f"  {peer} ({threads} thr): {table[threads][peer]['error']}")


if __name__ == "__main__":
    main()
