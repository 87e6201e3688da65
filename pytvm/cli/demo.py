"""``make demo`` (``python -m pytvm.cli.demo``): compile a packed C kernel, load it, run it on
NDArrays, time it, trace the FFI, then do the same on a server found through a tracker, over TVM's
RPC protocol; then compile a tensor expression (schedule, lower, C, run, time) and run a compiled
kernel on the accelerator; then compile a whole ONNX model, run it here and on a server behind a
tracker, check it against ONNX Runtime and time it beside ONNX Runtime.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

import pytvm
from pytvm.ffi import libinfo
from pytvm.runtime import load_module

KERNELS = r"""
#include "pytvm/c_backend_api.h"

/* c[i] = a[i] + b[i] on float32 vectors: the packed signature every kernel has. */
TVM_DLL int vadd(TVMValue* args, int* codes, int n, TVMValue* ret, int* ret_code, void* res) {
  DLTensor *a, *b, *c;
  int64_t i, len;
  (void)ret; (void)res;
  if (n != 3 || codes[0] != kTVMDLTensorHandle || codes[1] != kTVMDLTensorHandle ||
      codes[2] != kTVMDLTensorHandle) {
    TVMAPISetLastError("TypeError: vadd(a, b, c) expects three arrays");
    return -1;
  }
  a = (DLTensor*)args[0].v_handle; b = (DLTensor*)args[1].v_handle; c = (DLTensor*)args[2].v_handle;
  if (a->ndim != 1 || a->shape[0] != b->shape[0] || a->shape[0] != c->shape[0]) {
    TVMAPISetLastError("ValueError: vadd: the three arrays must be 1-d and of one length");
    return -1;
  }
  len = a->shape[0];
  for (i = 0; i < len; ++i) ((float*)c->data)[i] = ((float*)a->data)[i] + ((float*)b->data)[i];
  *ret_code = kTVMNullptr;
  return 0;
}

/* Looks up a Python function in the global registry and calls it: C -> Python. */
TVM_DLL int call_python(TVMValue* args, int* codes, int n, TVMValue* ret, int* ret_code,
                        void* res) {
  TVMFunctionHandle f;
  int rc;
  (void)codes; (void)res;
  if (n < 1 || TVMFuncGetGlobal(args[0].v_str, &f) != 0) return -1;
  if (f == NULL) {
    TVMAPISetLastError("AttributeError: call_python: no such global function");
    return -1;
  }
  rc = TVMFuncCall(f, args + 1, codes + 1, n - 1, ret, ret_code);
  TVMFuncFree(f);
  return rc;
}
"""


def _compile(workdir: Path) -> Path:
    src = workdir / "kernels.c"
    src.write_text(KERNELS)
    lib = libinfo.compile_shared([src], workdir / "kernels.so", what="the demo kernels")
    print("  $ cc -std=c11 -O2 -fPIC -shared -I<pytvm/include> kernels.c -o kernels.so")
    return lib


def main() -> None:
    """Run the demo and print what happened."""
    cc = libinfo.find_cc()
    print(f"pytvm {pytvm.__version__}: C compiler {libinfo.cc_version(cc) if cc else 'none'}")
    with tempfile.TemporaryDirectory(prefix="pytvm-demo-") as tmp:
        print("\n1. compile packed C kernels with the system compiler")
        start = time.perf_counter()
        mod = load_module(_compile(Path(tmp)))
        print(
            f"   loaded {mod} in {(time.perf_counter() - start) * 1e3:.0f} ms "
            "(first run also builds the host runtime library)"
        )

        print("\n2. call a C kernel on NDArrays")
        n = 1 << 20
        a = pytvm.nd.array(np.random.default_rng(0).random(n, dtype=np.float32))
        b = pytvm.nd.array(np.ones(n, dtype=np.float32))
        c = pytvm.nd.empty((n,), "float32")
        mod["vadd"](a, b, c)
        ok = np.array_equal(c.numpy(), a.numpy() + b.numpy())
        print(f"   vadd(a, b, c) on {n} float32: c[:3] = {c.numpy()[:3]}  (matches numpy: {ok})")

        result = mod.time_evaluator("vadd", pytvm.cpu(), number=20, repeat=5)(a, b, c)
        gbps = 3 * 4 * n / result.mean / 1e9
        print(
            f"   time_evaluator: mean {result.mean * 1e6:.1f} us, median "
            f"{result.median * 1e6:.1f} us over {len(result.results)} repeats "
            f"({gbps:.1f} GB/s moved)"
        )

        print("\n3. C calls back into Python through the global registry")
        pytvm.register_func("demo.scale", lambda x, k: x * k, override=True)
        print(f"   call_python('demo.scale', 21, 2) = {mod['call_python']('demo.scale', 21, 2)}")

        print("\n4. errors keep their kind across the C boundary")
        try:
            mod["vadd"](a, b)
        except TypeError as err:
            print(f"   vadd(a, b) -> {type(err).__name__}: {err}")

        @pytvm.register_func("demo.fail", override=True)
        def fail(key: str) -> None:
            raise KeyError(key)

        try:
            mod["call_python"]("demo.fail", "weights")
        except KeyError as err:
            print(f"   Python KeyError raised under C -> caught as KeyError({err})")

        print("\n5. DLPack: numpy sees the same memory, no copy")
        view = np.from_dlpack(c)
        view[0] = 42.0
        print(f"   np.from_dlpack(c)[0] = 42 -> c.numpy()[0] = {c.numpy()[0]}")

        fast = pytvm.ffi.c_function._fast_call is not None
        call_ns = min(_time_calls(mod["call_python"], ("demo.scale", 1, 1)) for _ in range(3))
        print(
            f"\nPython->C call path: {'fast-call extension' if fast else 'ctypes'}; "
            f"a C->Python round trip costs {call_ns:.2f} us"
        )

        _rpc_demo(Path(tmp) / "kernels.so")
        _accelerator_demo(Path(tmp) / "board")
        _compiler_demo(Path(tmp) / "compiler")
        _graph_demo(Path(tmp) / "graph")


def _ms(start: float) -> str:
    return f"{(time.perf_counter() - start) * 1e3:.1f} ms"


def _rpc_demo(lib_path: Path) -> None:
    """Tracker + server on loopback; request the server, copy, call, time, all remotely."""
    from pytvm import rpc
    from pytvm.rpc.services.server import Server
    from pytvm.rpc.services.tracker import Tracker

    print("\n6. RPC: a tracker and a server on loopback, found by key")
    with Tracker(host="127.0.0.1", port=9190, port_end=9290, silent=True) as tracker:
        print(f"   tracker on 127.0.0.1:{tracker.port}")
        with Server(
            host="127.0.0.1",
            port=9090,
            port_end=9190,
            key="demo-board",
            tracker_addr=("127.0.0.1", tracker.port),
            silent=True,
        ) as server:
            print(f"   server on 127.0.0.1:{server.port}, registered as key 'demo-board'")
            client = rpc.connect_tracker("127.0.0.1", tracker.port)
            start = time.perf_counter()
            sess = client.request("demo-board", session_timeout=60)
            add = sess.get_function("rpc.test.addone")
            first = add(41)
            print(f"   request('demo-board') -> session + first call = {first} in {_ms(start)}")

            n = 4 << 20
            x = np.random.default_rng(1).random(n, dtype=np.float32)
            start = time.perf_counter()
            a = pytvm.nd.array(x, sess.cpu())
            to_remote = time.perf_counter() - start
            start = time.perf_counter()
            back = a.numpy()
            from_remote = time.perf_counter() - start
            mib = x.nbytes / (1 << 20)
            print(
                f"   {mib:.0f} MiB to {a.device}: {to_remote * 1e3:.1f} ms "
                f"({mib / to_remote:.0f} MiB/s); back: {from_remote * 1e3:.1f} ms "
                f"({mib / from_remote:.0f} MiB/s); bit-exact: {np.array_equal(back, x)}"
            )

            start = time.perf_counter()
            sess.upload(str(lib_path), "kernels.so")
            rmod = sess.load_module("kernels.so")
            print(f"   uploaded kernels.so and loaded it on the server in {_ms(start)}")
            b = pytvm.nd.array(np.ones(n, dtype=np.float32), sess.cpu())
            c = pytvm.nd.empty((n,), "float32", sess.cpu())
            rmod["vadd"](a, b, c)
            ok = np.array_equal(c.numpy(), x + 1)
            print(f"   remote vadd(a, b, c): matches numpy: {ok}")
            result = rmod.time_evaluator("vadd", sess.cpu(), number=10, repeat=3)(a, b, c)
            print(f"   remote time_evaluator: mean {result.mean * 1e6:.1f} us on the server")

            start = time.perf_counter()
            for _ in range(1000):
                add(1)
            per_call = (time.perf_counter() - start) / 1000 * 1e6
            print(f"   a remote call round trip costs {per_call:.1f} us")
            sess.close()
            client.close()
    print("   server and tracker stopped")


def _time_calls(func: pytvm.PackedFunc, args: tuple[object, ...], number: int = 2000) -> float:
    start = time.perf_counter()
    for _ in range(number):
        func(*args)
    return (time.perf_counter() - start) / number * 1e6


def _accelerator_demo(workspace: Path) -> None:
    """Seed 000 on this machine: host -> board server (via the tracker) -> accelerator emulator
    (a C process running the CRT and MinRPC, device type 16 with its own memory pool).
    """
    from pytvm.contrib.hexagon import Launcher
    from pytvm.crt import device_binary
    from pytvm.rpc.services.tracker import Tracker

    print("\n7. seed 000: host -> board -> accelerator emulator (CRT + MinRPC in C)")
    start = time.perf_counter()
    device_binary(hexagon=True)
    print(f"   device binary ready in {_ms(start)} (built with make on first use)")
    with Tracker(host="127.0.0.1", port=9190, port_end=9290, silent=True) as tracker:
        info = {
            "rpc_tracker_host": "127.0.0.1",
            "rpc_tracker_port": tracker.port,
            "device_key": "demo-hexagon",
        }
        launcher = Launcher(str(workspace), info)
        port = launcher.start_server()
        print(f"   board server on 127.0.0.1:{port}, registered as 'demo-hexagon'")
        try:
            start = time.perf_counter()
            with launcher.create_session() as sess:
                print(f"   create_session(): {sess.device} in {_ms(start)}")
                A = pytvm.nd.empty((2,), "int32", sess.device)
                with pytvm.trace() as trace:
                    A.copyfrom(np.array([2, 3], "int32"))
                print(f"   A.copyfrom([2, 3]); A.numpy() = {A.numpy().tolist()}")
                pool = str(sess.get_function("pytvm.hexagon.pool_range")()).split(",")
                base, size = int(pool[0]), int(pool[1])
                peek = bytes(sess.get_function("pytvm.hexagon.peek")(A.data_ptr, 0, 8))
                print(
                    f"   A's data pointer {A.data_ptr:#x} lies in the emulator's pool "
                    f"[{base:#x}, +{size >> 20} MiB): {base <= A.data_ptr < base + size}; "
                    f"bytes there: {peek.hex(' ')}"
                )
                print("\n   trace of A.copyfrom(...) across the three processes:")
                for line in trace.text().splitlines():
                    print(f"     {line}")

                x = np.random.default_rng(2).random((64 << 20) // 4, dtype=np.float32)
                start = time.perf_counter()
                B = pytvm.nd.array(x, sess.device)
                up = time.perf_counter() - start
                start = time.perf_counter()
                same = np.array_equal(B.numpy(), x)
                down = time.perf_counter() - start
                print(
                    f"\n   64 MiB to the accelerator in {up * 1e3:.0f} ms ({64 / up:.0f} MiB/s), "
                    f"back in {down * 1e3:.0f} ms ({64 / down:.0f} MiB/s), chunked to the "
                    f"device's packet size; bit-exact: {same}"
                )
                C = pytvm.nd.array(np.arange(4, dtype="float32"), sess.device)
                sess.get_function("pytvm.device.scale_f32")(C, 2.5)
                print(f"   C function scale_f32 run in the emulator: {C.numpy().tolist()}")
        finally:
            launcher.stop_server()
    print("   board server and tracker stopped")


def _matmul_schedule(n: int, lanes: int) -> tuple[Any, list[Any]]:
    """Seed 004's matmul, scheduled: register tiles in a local buffer, SIMD lanes, threads."""
    from pytvm import te

    k = te.reduce_axis((0, n), name="k")
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    C = te.compute((n, n), lambda x, y: te.sum(A[x, k] * B[k, y], axis=k), name="C")
    s = te.create_schedule(C.op)
    CC = s.cache_write(C, "local")
    xo, yo, _, yi = s[C].tile(C.op.axis[0], C.op.axis[1], 8, 2 * lanes)
    s[C].parallel(xo)
    s[C].vectorize(yi)
    s[CC].compute_at(s[C], yo)
    xc, yc = s[CC].op.axis
    (kc,) = s[CC].op.reduce_axis
    s[CC].reorder(kc, xc, yc)
    s[CC].unroll(xc)
    s[CC].vectorize(yc)
    return s, [A, B, C]


def _topi_matmul(n: int, target: Any) -> Any:
    """The same matmul from the operator library, with its default CPU schedule."""
    from pytvm import te, topi

    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    C = topi.nn.matmul(A, B)
    with target:
        return pytvm.build(topi.x86.schedule_matmul([C]), [A, B, C], name="matmul")


def _compiler_demo(workspace: Path) -> None:
    """Issue 11's flow: te -> schedule -> lower (loop IR) -> LLVM IR (``target="llvm"``'s default
    backend) -> module; then the accelerator.
    """
    from pytvm.target import Target

    n = 512
    target = Target("llvm -mcpu=native")
    lanes = target.vector_lanes("float32")
    print(f"\n8. the tensor compiler: a {n}x{n}x{n} matmul ({lanes} float32 lanes on this CPU)")
    s, args = _matmul_schedule(n, lanes)
    lowered = pytvm.lower(s, args, name="mmult")
    text = str(lowered).splitlines()
    print("   pytvm.lower(s, [A, B, C], name='mmult'):")
    for line in text[:14]:
        print(f"     {line}")
    print(f"     ... ({len(text)} lines)")
    start = time.perf_counter()
    mod = pytvm.build(s, args, target=target, name="mmult")
    print(f"   pytvm.build(..., target='{target}') in {_ms(start)}; get_source() begins:")
    source = mod.get_source().splitlines()
    entry = next(
        i for i, line in enumerate(source) if "mmult(TVMValue" in line or '@"mmult"(' in line
    )
    for line in source[entry : entry + 6]:
        print(f"     {line[:96]}")
    rng = np.random.default_rng(0)
    a, b = rng.random((n, n), dtype=np.float32), rng.random((n, n), dtype=np.float32)
    A, B = pytvm.nd.array(a), pytvm.nd.array(b)
    C = pytvm.nd.empty((n, n), "float32")
    mod["mmult"](A, B, C)
    ok = np.allclose(C.numpy(), a @ b, rtol=1e-4)
    timing = mod.time_evaluator("mmult", pytvm.cpu(), number=5, repeat=3)(A, B, C)
    flops = 2.0 * n**3
    start = time.perf_counter()
    for _ in range(5):
        a @ b
    numpy_s = (time.perf_counter() - start) / 5
    print(f"   matches numpy: {ok}; this schedule: {flops / timing.mean / 1e9:.1f} GFLOP/s")
    tuned = _topi_matmul(n, target)
    tuned["matmul"](A, B, C)
    tuned_s = tuned.time_evaluator("matmul", pytvm.cpu(), number=5, repeat=3)(A, B, C).mean
    print(
        f"   topi.nn.matmul with its default schedule (packed B panels): "
        f"{flops / tuned_s / 1e9:.1f} GFLOP/s, matches numpy: "
        f"{np.allclose(C.numpy(), a @ b, rtol=1e-4)}; numpy's BLAS here: "
        f"{flops / numpy_s / 1e9:.1f} GFLOP/s"
    )
    try:
        mod["mmult"](A, B, pytvm.nd.empty((n, n + 1), "float32"))
    except ValueError as err:
        print(f"   a wrong call raises ValueError: {err}")
    _compiled_on_accelerator(workspace)


def _compiled_on_accelerator(workspace: Path) -> None:
    """The same flow for the accelerator: a system-lib kernel linked into the emulator."""
    from pytvm import te
    from pytvm.contrib.hexagon import Launcher
    from pytvm.rpc.services.tracker import Tracker

    n = 1024
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: te.sigmoid(A[i]) * 2.0, name="B")
    s = te.create_schedule(B.op)
    _, inner = s[B].split(B.op.axis[0], factor=8)
    s[B].vectorize(inner)
    workspace.mkdir(parents=True, exist_ok=True)
    src = workspace / "kernels.c"
    pytvm.build(s, [A, B], target="c --system-lib", name="scaled_sigmoid").save(src)
    print("\n9. the same path to the accelerator: target 'c --system-lib' -> kernels.c, linked")
    print("   into the emulator behind the board (seed 001's function registry)")
    with Tracker(host="127.0.0.1", port=9190, port_end=9290, silent=True) as tracker:
        info = {
            "rpc_tracker_host": "127.0.0.1",
            "rpc_tracker_port": tracker.port,
            "device_key": "demo-kernels",
            "system_lib": [str(src)],
        }
        launcher = Launcher(str(workspace / "board"), info)
        launcher.start_server()
        try:
            with launcher.create_session() as sess:
                x = np.linspace(-4, 4, n, dtype=np.float32)
                X = pytvm.nd.array(x, sess.device)
                Y = pytvm.nd.empty((n,), "float32", sess.device)
                sess.system_lib()["scaled_sigmoid"](X, Y)
                ok = np.allclose(Y.numpy(), 2 / (1 + np.exp(-x)), rtol=1e-5)
                print(f"   system_lib()['scaled_sigmoid'] on {sess.device}: matches numpy: {ok}")
        finally:
            launcher.stop_server()


_MAKE_MODELS = Path(__file__).resolve().parents[2] / "models" / "make_models.py"


def _graph_demo(workspace: Path) -> None:
    """A reference model: ONNX -> graph IR -> fused kernels -> one .so -> here and remote."""
    import subprocess
    import sys

    import onnx
    import onnxruntime

    from pytvm import graph
    from pytvm.frontend import from_onnx
    from pytvm.runtime.graph_executor import GraphModule

    print("\n10. the graph compiler: an ONNX model (ResNet-18) compiled, run, checked, timed")
    workspace.mkdir(parents=True)
    subprocess.run(
        [sys.executable, str(_MAKE_MODELS), str(workspace), "--only", "resnet18", "--no-verify"],
        check=True,
        capture_output=True,
    )
    path = workspace / "resnet18.onnx"
    start = time.perf_counter()
    mod, params = from_onnx(onnx.load(str(path)))
    calls = str(mod).count(" = ")
    print(f"   from_onnx: {calls} graph nodes, {len(params)} parameters in {_ms(start)}")
    start = time.perf_counter()
    lib = graph.build(mod, target="llvm", params=params)
    lib.export_library(str(workspace / "net.so"))
    kernels = lib.get_graph_json().count('"tvm_op"')
    print(f"   graph.build: {kernels} fused kernel calls, exported net.so in {_ms(start)}")
    plan = graph.plan_memory(mod, params)
    cpu = plan.devices[1]
    print(
        f"   memory plan (arena): intermediates {(cpu.planned_bytes - cpu.pinned_bytes) / 1e6:.2f}"
        f" MB, without reuse {(cpu.no_reuse_bytes - cpu.pinned_bytes) / 1e6:.2f} MB"
    )
    x = np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype("float32")
    name = mod["main"].params[0].name
    m = GraphModule(pytvm.runtime.load_module(str(workspace / "net.so"))["default"](pytvm.cpu()))
    m.set_input(name, x)
    m.run()
    ours_out = m.get_output(0).numpy()
    # timed before ONNX Runtime runs: its worker threads spin after each run
    ours = m.benchmark(pytvm.cpu(), repeat=5, number=2).median * 1e3
    sess = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    (expected,) = sess.run(None, {name: x})
    err = float(np.abs(ours_out - expected).max())
    ort_ms = _median_ms(lambda: sess.run(None, {name: x}))
    print(
        f"   here: max abs error vs ONNX Runtime {err:.2e}; latency {ours:.1f} ms, ONNX "
        f"Runtime {ort_ms:.1f} ms ({ours / ort_ms:.1f}x)"
    )
    _graph_remote(workspace / "net.so", name, x, expected)


def _graph_remote(lib_path: Path, name: str, x: np.ndarray, expected: np.ndarray) -> None:
    """Run the exported model on a server requested through a tracker."""
    from pytvm import rpc
    from pytvm.rpc.services.server import Server
    from pytvm.rpc.services.tracker import Tracker
    from pytvm.runtime.graph_executor import GraphModule

    with Tracker(host="127.0.0.1", port=9190, port_end=9290, silent=True) as tracker:
        with Server(
            host="127.0.0.1", port=9090, port_end=9190, key="demo-board",
            tracker_addr=("127.0.0.1", tracker.port), silent=True,
        ):  # fmt: skip
            remote = rpc.connect_tracker("127.0.0.1", tracker.port).request("demo-board")
            start = time.perf_counter()
            remote.upload(str(lib_path))
            rm = GraphModule(remote.load_module("net.so")["default"](remote.cpu()))
            print(f"   remote: uploaded and loaded net.so through the tracker in {_ms(start)}")
            rm.set_input(name, x)
            rm.run()
            rerr = float(np.abs(rm.get_output(0).numpy() - expected).max())
            rms = rm.benchmark(remote.cpu(), repeat=5, number=2).median * 1e3
            print(
                f"   remote: max abs error vs ONNX Runtime {rerr:.2e}; latency {rms:.1f} ms "
                "on the server"
            )
            remote.close()
    print("   server and tracker stopped")


def _median_ms(run: Any, times: int = 10) -> float:
    run()
    samples = []
    for _ in range(times):
        start = time.perf_counter()
        run()
        samples.append(time.perf_counter() - start)
    return float(np.median(samples)) * 1e3


if __name__ == "__main__":
    main()
