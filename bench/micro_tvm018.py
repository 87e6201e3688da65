"""pytvm's AOT C beside Apache TVM v0.18's for a Cortex-M4: code, weights, RAM and instructions
per inference in QEMU's mps2-an386, both checked against ONNX Runtime.

Per model (``cnn_small`` of models/make_models.py; ``kws_cnn`` and ``person_detect_cnn``, float32,
of models/make_mcu_models.py):

* pytvm: ``relay.build`` with ``Executor("aot", {"interface-api": "c", "unpacked-api": True,
  "link-params": True})`` for ``c -mcpu=cortex-m4``, exported as Model Library Format
  (examples/bundle/build_model.py ``--mlf``);
* TVM v0.18 (run in the interpreter given by ``--tvm-python``, TVM's ``python/`` on
  ``--tvm-pythonpath``): ``relay.frontend.from_onnx`` and ``relay.build`` with the same executor,
  ``Runtime("crt")``, under ``PassContext(opt_level=3, config={"tir.disable_vectorize": True,
  "tir.usmp.enable": True})`` (USMP: one static workspace pool, as microTVM users build), then
  ``tvm.micro.export_model_library_format``.

Both MLFs' ``codegen/host/src/*.c`` are compiled alone with the same compiler and flags
(``FLAGS`` below; TVM's C with the MLF's ``runtime/include``) and their sections summed:
text = ``.text*``, rodata = ``.rodata*`` (the weights), ram = ``.data*`` + ``.bss*`` (the static
workspace; TVM's USMP pool is a static array of its generated C). Each model's C is then linked
into examples/bundle's board program (the same main.c, its Makefile's ``qemu`` goal with the
model's C compiled with the flags above) and run in QEMU with ``-icount shift=0``: the printed
board time of one ``tvmgen_default_run`` is its instruction count. A row's outputs must match
ONNX Runtime (rtol 1e-4, atol 1e-5) or the row says they do not.

Run: ``.venv/bin/python bench/micro_tvm018.py --tvm-python /work/venv-tvm018/bin/python
--tvm-pythonpath /work/tvm018/python`` (``--only kws_cnn``; ``--work DIR`` keeps the files).
Without a TVM v0.18 the interpreter can import it prints ``TVM v0.18 not available: <why>`` and
exits 0.

TVM needs its LLVM code generator even for the ``c`` target: relay's FoldConstant compiles the
folded expressions for ``llvm``, and the arm_cpu conv2d strategy asks LLVM's version and the
target's CPU features. A ``libtvm.so`` built with ``USE_LLVM OFF`` can take TVM's
``src/target/llvm/*.cc`` built as a separate shared library (compiled with
``-DTVM_LLVM_VERSION=<major*10>`` and linked against ``libtvm.so`` and ``libLLVM``):
``--tvm-llvm-plugin PATH`` loads it (``RTLD_GLOBAL``) before ``import tvm``, so its functions
are registered as they are in an LLVM build. AutoTVM's TopHub download is off
(``TOPHUB_LOCATION=NONE``): the schedules run with their fallback configs.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
BUNDLE = REPO / "examples" / "bundle"
MODELS = ("cnn_small", "kws_cnn", "person_detect_cnn")
CC = "arm-none-eabi-gcc"
# the flags of every model object (the bundle Makefile's BOARD_CFLAGS with OPT=-O2)
FLAGS = (
    "-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16 -O2 -ffp-contract=fast"
    " -ffunction-sections -fdata-sections"
).split()
TARGET = "c -mcpu=cortex-m4"
TIMEOUT_S = 1800.0

# Run by the TVM v0.18 interpreter: argv = onnx path, input name, shape (comma list), dtype,
# MLF tar path. Prints one JSON line with what the factory says.
TVM_BUILD = r"""
import ctypes, json, os, sys
# TVM's LLVM code generator as a plugin of a libtvm.so built without it (loaded before tvm, so
# its registered functions are TVM's): relay's FoldConstant compiles for "llvm"
if os.environ.get("TVM018_LLVM_PLUGIN"):
    ctypes.CDLL(os.environ["TVM018_LLVM_PLUGIN"], mode=ctypes.RTLD_GLOBAL)
# no network here: AutoTVM's TopHub logs (tuned arm_cpu configs) are not downloaded; the
# schedules take their fallback configs
os.environ["TOPHUB_LOCATION"] = "NONE"
import onnx
import tvm
import tvm.micro
from tvm import relay
from tvm.relay.backend import Executor, Runtime

onnx_path, name, shape, dtype, tar = sys.argv[1:6]
shape = [int(d) for d in shape.split(",")]
mod, params = relay.frontend.from_onnx(onnx.load(onnx_path), shape={name: shape}, dtype=dtype)
executor = Executor("aot", {"interface-api": "c", "unpacked-api": True, "link-params": True})
config = {"tir.disable_vectorize": True, "tir.usmp.enable": True}
with tvm.transform.PassContext(opt_level=3, config=config):
    factory = relay.build(
        mod, target=sys.argv[6], executor=executor, runtime=Runtime("crt"), params=params
    )
tvm.micro.export_model_library_format(factory, tar)
main = factory.function_metadata["__tvm_main__"]
print(json.dumps({
    "version": tvm.__version__,
    "workspace_bytes": {str(t): int(v) for t, v in main.workspace_sizes.items()},
}))
"""

TVM_CHECK = (
    "import ctypes, os\n"
    "if os.environ.get('TVM018_LLVM_PLUGIN'):\n"
    "    ctypes.CDLL(os.environ['TVM018_LLVM_PLUGIN'], mode=ctypes.RTLD_GLOBAL)\n"
    "import tvm\n"
    "print(tvm.__version__, flush=True)\n"
    "import tvm.relay, tvm.micro\n"
    "print(tvm.get_global_func('target.build.llvm', allow_missing=True) is not None)\n"
)


def _load(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _tvm_env(pythonpath: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = pythonpath
    return env


def _set_llvm_plugin(path: str | None) -> None:
    """Hand ``path`` (TVM's LLVM code generator built as a plugin) to TVM's interpreter."""
    if path:
        os.environ["TVM018_LLVM_PLUGIN"] = str(Path(path).resolve())


def tvm018_unavailable(python: str | None, pythonpath: str) -> str | None:
    """Why ``python`` (with ``pythonpath``) cannot run TVM v0.18, or None when it can."""
    if not python or (shutil.which(python) is None and not Path(python).is_file()):
        return f"--tvm-python {python}: no such interpreter" if python else "no --tvm-python given"
    try:
        done = subprocess.run(
            [python, "-c", TVM_CHECK],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
            env=_tvm_env(pythonpath),
        )
    except (OSError, subprocess.TimeoutExpired) as err:
        return f"{python} -c 'import tvm': {err}"
    lines = done.stdout.split()
    if lines and not lines[0].startswith("0.18"):
        return f"{python} imports TVM {lines[0]}, not 0.18"
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
        return f"{python} cannot import tvm, tvm.relay and tvm.micro: {last}"
    if lines[-1] != "True":
        return (
            f"{python}'s TVM {lines[0]} has no LLVM code generator, which relay's FoldConstant"
            " needs (build TVM with USE_LLVM, or give --tvm-llvm-plugin)"
        )
    return None


@dataclass
class Sizes:
    """Bytes of a model's objects, by section kind."""

    text: int = 0
    rodata: int = 0
    ram: int = 0


def compile_sizes(srcs: list[Path], includes: list[Path], objdir: Path) -> Sizes:
    """Compile ``srcs`` with ``FLAGS`` and sum their sections (``arm-none-eabi-size -A``)."""
    objdir.mkdir(parents=True, exist_ok=True)
    sizes = Sizes()
    for src in srcs:
        obj = objdir / (src.stem + ".o")
        argv = [CC, *FLAGS, *(f"-I{p}" for p in includes), "-c", str(src), "-o", str(obj)]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)} failed:\n{done.stderr}")
        table = subprocess.run(
            ["arm-none-eabi-size", "-A", str(obj)], capture_output=True, text=True, check=True
        ).stdout
        for line in table.splitlines():
            parts = line.split()
            if len(parts) != 3 or not parts[1].isdigit():
                continue
            name, nbytes = parts[0], int(parts[1])
            if name.startswith(".text"):
                sizes.text += nbytes
            elif name.startswith(".rodata"):
                sizes.rodata += nbytes
            elif name.startswith((".data", ".bss")):
                sizes.ram += nbytes
    return sizes


def _extract(tar_path: Path, prefix: str, dest: Path) -> None:
    """Files of ``tar_path`` under ``prefix`` into ``dest`` (paths below the prefix kept)."""
    with tarfile.open(tar_path) as tar:
        for member in tar.getmembers():
            name = member.name.removeprefix("./")
            if not member.isfile() or not name.startswith(prefix):
                continue
            data = tar.extractfile(member)
            assert data is not None
            target = dest / name[len(prefix) :]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data.read())


def link_and_run(out: Path, model: str, includes: list[Path], run_bundle: ModuleType) -> Any:
    """The bundle's board image of ``out`` (make qemu, the model's C with ``FLAGS``), run in QEMU
    with ``-icount shift=0``.
    """
    (out / "model" / "board_cflags").write_text("\n")  # BOARD_CFLAGS alone: FLAGS
    argv = [
        "make",
        "-s",
        "-C",
        str(BUNDLE),
        "qemu",
        f"MODEL={model}",
        f"OUT={out}",
        "OPT=-O2",
        # the model's C: no warning flags, gcc's default C dialect, for pytvm's and TVM's alike
        "MODEL_WARN=",
        "MODEL_INCLUDES=" + " ".join(f"-I{p}" for p in includes),
        f"PYTHON={sys.executable}",
    ]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=900, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed:\n{done.stdout}\n{done.stderr}")
    return run_bundle.run_qemu(out, icount_shift=0)


def _matches(run: Any, expected: np.ndarray) -> bool:
    got = run.outputs[0].reshape(expected.shape)
    return bool(np.allclose(got, expected, rtol=1e-4, atol=1e-5))


def _max_diff(run: Any, expected: np.ndarray) -> float:
    return float(np.abs(run.outputs[0].reshape(expected.shape) - expected).max())


def measure(
    name: str, work: Path, tvm_python: str, tvm_pythonpath: str, harness: Path
) -> dict[str, Any]:
    """The figures of one model, pytvm's and TVM v0.18's."""
    import onnx

    build_model = _load("build_model", BUNDLE / "build_model.py")
    run_bundle = _load("run_bundle", BUNDLE / "run_bundle.py")
    model, inp, x = build_model.load_model(name, 1)
    onnx_path = work / f"{name}.onnx"
    onnx.save(model, str(onnx_path))
    expected = build_model.onnxruntime_output(model, inp, x)
    if expected is None:
        raise RuntimeError("onnxruntime is not installed in this interpreter")

    # pytvm
    mine = work / name / "pytvm"
    with contextlib.redirect_stdout(io.StringIO()):
        factory = build_model.build(name, mine, mlf=True)
    mine_sizes = compile_sizes(
        sorted((mine / "model" / "src").glob("*.c")), [mine / "model" / "include"], mine / "objs"
    )
    mine_run = link_and_run(mine, name, [mine, mine / "model" / "include"], run_bundle)

    # TVM v0.18
    theirs = work / name / "tvm018"
    shutil.rmtree(theirs, ignore_errors=True)
    theirs.mkdir(parents=True)
    tar = theirs / "model.mlf.tar"
    script = work / "tvm018_build.py"
    script.write_text(TVM_BUILD)
    shape = ",".join(str(d) for d in x.shape)
    done = subprocess.run(
        [tvm_python, str(script), str(onnx_path), inp, shape, str(x.dtype), str(tar), TARGET],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
        env=_tvm_env(tvm_pythonpath),
    )
    if done.returncode != 0:
        raise RuntimeError(f"TVM v0.18's relay.build of {name} failed:\n{done.stderr[-4000:]}")
    tvm_info = json.loads(done.stdout.strip().splitlines()[-1])
    _extract(tar, "codegen/host/", theirs / "model")
    _extract(tar, "runtime/include/", theirs / "runtime_include")
    _extract(tar, "", theirs / "mlf")
    metadata = json.loads((theirs / "mlf" / "metadata.json").read_text())
    srcs = sorted((theirs / "model" / "src").glob("*.c"))
    includes = [theirs / "model" / "include", theirs / "runtime_include"]
    theirs_sizes = compile_sizes(srcs, includes, theirs / "objs")
    pool = _pool_bytes(srcs)
    # the bundle's input arrays, output buffers and figures are the same for both builds
    for file in ("bundle_data.h", "model.json", "input.npy", "input0.bin", "expected_output.npy"):
        shutil.copy2(mine / file, theirs / file)
    # TVM's C may call TVM's backend API (workspace allocation, error text): then the harness's
    # definitions are linked beside it (never counted in its sizes)
    backend = _BACKEND_CALL.search("".join(src.read_text() for src in srcs))
    if backend is not None:
        shutil.copy2(harness, theirs / "model" / "src" / harness.name)
    theirs_run = link_and_run(theirs, name, [theirs, *includes], run_bundle)
    return {
        "pytvm": mine_sizes,
        "tvm": theirs_sizes,
        "pytvm_workspace": int(factory.workspace_bytes),
        "tvm_pool": pool,
        "tvm_workspace": tvm_info["workspace_bytes"],
        "tvm_memory": metadata["modules"]["default"]["memory"],
        "pytvm_insns": mine_run.best_ns,
        "tvm_insns": theirs_run.best_ns,
        "pytvm_ok": _matches(mine_run, expected),
        "tvm_ok": _matches(theirs_run, expected),
        "pytvm_diff": _max_diff(mine_run, expected),
        "tvm_diff": _max_diff(theirs_run, expected),
        "tvm_version": tvm_info["version"],
        "harness": backend is not None,
    }


_BACKEND_CALL = re.compile(r"\b(TVMBackend\w+|TVMAPISetLastError)\s*\(")
_POOL = re.compile(r"^static uint8_t (\w*workspace\w*)\[(\d+)\];", re.MULTILINE)


def _pool_bytes(srcs: list[Path]) -> int:
    """Bytes of the static workspace arrays TVM's generated C declares (USMP's pools)."""
    total = 0
    for src in srcs:
        for _, nbytes in set(_POOL.findall(src.read_text())):
            total += int(nbytes)
    return total


# TVM's backend API, as far as the AOT C of a USMP build may reference it: no heap here
# (a workspace request fails), the error text dropped.
HARNESS_C = """/* bench/micro_tvm018.py: TVM's backend API for TVM v0.18's AOT C in the bundle. */
#include <stddef.h>
#include <stdint.h>
void* TVMBackendAllocWorkspace(int device_type, int device_id, uint64_t nbytes, int dtype_code,
                               int dtype_bits);
int TVMBackendFreeWorkspace(int device_type, int device_id, void* ptr);
void TVMAPISetLastError(const char* msg);
void* TVMBackendAllocWorkspace(int device_type, int device_id, uint64_t nbytes, int dtype_code,
                               int dtype_bits) {
  (void)device_type; (void)device_id; (void)nbytes; (void)dtype_code; (void)dtype_bits;
  return NULL;
}
int TVMBackendFreeWorkspace(int device_type, int device_id, void* ptr) {
  (void)device_type; (void)device_id; (void)ptr;
  return 0;
}
void TVMAPISetLastError(const char* msg) { (void)msg; }
"""


def _row(name: str, r: dict[str, Any]) -> str:
    p, t = r["pytvm"], r["tvm"]
    ratio = r["tvm_insns"] / r["pytvm_insns"] if r["pytvm_insns"] > 0 else float("nan")
    ok = "" if r["pytvm_ok"] and r["tvm_ok"] else "  OUTPUTS DIFFER FROM ONNXRUNTIME"
    return (
        f"{name:<18} | {p.text:>8,} {p.rodata:>9,} {p.ram:>8,} | {t.text:>8,} {t.rodata:>9,}"
        f" {t.ram:>8,} | {r['pytvm_insns']:>12,} {r['tvm_insns']:>12,} {ratio:>6.2f}{ok}"
    )


def main(argv: list[str] | None = None) -> int:
    """Measure and print the table; 0 also when TVM v0.18 is not available."""
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--tvm-python", default=os.environ.get("TVM018_PYTHON"))
    ap.add_argument("--tvm-pythonpath", default=os.environ.get("TVM018_PYTHONPATH", ""))
    ap.add_argument(
        "--tvm-llvm-plugin",
        default=os.environ.get("TVM018_LLVM_PLUGIN"),
        help="a shared library of TVM's src/target/llvm for a libtvm.so built without LLVM",
    )
    ap.add_argument("--only", choices=MODELS, action="append", help="measure only these models")
    ap.add_argument("--work", type=Path, help="keep the files here (default: a temporary dir)")
    args = ap.parse_args(argv)

    _set_llvm_plugin(args.tvm_llvm_plugin)
    why = tvm018_unavailable(args.tvm_python, args.tvm_pythonpath)
    if why is not None:
        print(f"TVM v0.18 not available: {why}")
        return 0
    for tool in (CC, "arm-none-eabi-size", "qemu-system-arm", "make"):
        if shutil.which(tool) is None:
            print(f"{tool} not available: nothing measured")
            return 0
    version = subprocess.run(
        [CC, "--version"], capture_output=True, text=True, check=True
    ).stdout.splitlines()[0]
    with contextlib.ExitStack() as stack:
        if args.work is None:
            work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="tvm018-")))
        else:
            work = args.work.resolve()
            work.mkdir(parents=True, exist_ok=True)
        harness = work / "tvm_backend_harness.c"
        harness.write_text(HARNESS_C)
        print(f"compiler: {version}")
        print(f"flags: {' '.join(FLAGS)}  (each model's C; target {TARGET!r})")
        print("instructions: QEMU mps2-an386 -icount shift=0, one tvmgen_default_run")
        print(
            "TVM v0.18: relay.build, AOT (c API, unpacked, link-params), Runtime('crt'),"
            " opt_level=3, tir.disable_vectorize, tir.usmp.enable"
        )
        header = (
            f"{'model':<18} | {'pytvm text':>8} {'rodata':>9} {'ram':>8} |"
            f" {'TVM text':>8} {'rodata':>9} {'ram':>8} |"
            f" {'insns pytvm':>12} {'insns TVM':>12} {'TVM/py':>6}"
        )
        print(header)
        print("-" * len(header))
        notes = []
        for name in args.only or MODELS:
            try:
                r = measure(name, work, args.tvm_python, args.tvm_pythonpath, harness)
            except (RuntimeError, subprocess.SubprocessError, OSError, ValueError) as err:
                print(f"{name:<18} | failed: {str(err).strip().splitlines()[0][:200]}")
                continue
            print(_row(name, r))
            notes.append(
                f"{name}: pytvm workspace {r['pytvm_workspace']:,} B; TVM {r['tvm_version']}"
                f" USMP pool {r['tvm_pool']:,} B (main's workspace {r['tvm_workspace']});"
                f" largest |output - onnxruntime|: pytvm {r['pytvm_diff']:.2g},"
                f" TVM {r['tvm_diff']:.2g}"
                + (
                    "; TVM's C calls TVM's backend API: linked with tvm_backend_harness.c"
                    if r["harness"]
                    else ""
                )
            )
        for line in notes:
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
