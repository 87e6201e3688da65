"""TVM v0.18's ``tvm.testing.aot``: compile Relay models with the AOT executor, run them as a
C program on this machine and check their outputs against reference data.

:func:`compile_and_run` builds each :class:`AOTTestModel` with ``relay.build(...,
executor=Executor("aot", ...), runtime=Runtime("crt"))``, writes a C ``main`` that holds the
inputs and the expected outputs as arrays, calls ``tvmgen_<name>_run`` through the
``tvmgen_<name>_inputs``/``_outputs`` structs (both interface APIs keep them in pytvm's C), compares
every output element (floats within ``output_tolerance``, default 0.001; integers exactly) and
prints ``AOT_TEST_SUCCESS`` or ``AOT_TEST_FAILURE``; a failure raises ``RuntimeError`` with what
the program printed (``print_output_on_mismatch=True``: each mismatched element with its index,
``Actual, Reference``, and the share that mismatched). It compiles with the host C compiler
(``$CC``, else ``cc``); only TVM's ``"default"`` runner (this machine) runs here.

Examples
--------
>>> import numpy as np
>>> from pytvm import relay
>>> x = relay.var("x", shape=(4,), dtype="float32")
>>> mod = relay.IRModule.from_expr(relay.Function([x], relay.add(x, x)))
>>> data = {"x": np.arange(4, dtype="float32")}
>>> model = AOTTestModel(module=mod, inputs=data, outputs=generate_ref_data(mod, data))
>>> compile_and_run(model, AOTTestRunner(), "c", True)   # doctest: +SKIP
"""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from .. import relay
from ..ffi.device import cpu
from ..ffi.errors import TVMValueError
from ..ir.transform import PassContext
from ..relay.backend import Executor, Runtime

__all__ = [
    "AOTCompiledTestModel",
    "AOTTestModel",
    "AOTTestRunner",
    "compile_and_run",
    "compile_models",
    "generate_ref_data",
    "run_and_check",
]

_C_TYPES = {
    "float32": "float",
    "float64": "double",
    "int8": "int8_t",
    "int16": "int16_t",
    "int32": "int32_t",
    "int64": "int64_t",
    "uint8": "uint8_t",
    "uint16": "uint16_t",
    "uint32": "uint32_t",
    "uint64": "uint64_t",
    "bool": "uint8_t",
}
_DEFAULT_TOLERANCE = 0.001


class AOTTestModel(NamedTuple):
    """A model to test: the Relay ``module``, its ``inputs`` and expected ``outputs`` (name ->
    array), the tolerance of float outputs, ``params`` bound at build, and the ``name`` that
    prefixes its C symbols (``tvmgen_<name>_run``).
    """

    module: Any
    inputs: Mapping[str, np.ndarray]
    outputs: Mapping[str, np.ndarray]
    output_tolerance: float | None = None
    params: Mapping[str, Any] | None = None
    extra_memory_in_bytes: int = 0
    name: str = "default"
    pass_config: Mapping[str, Any] | None = None


@dataclass
class AOTTestRunner:
    """How the test program is built and run: ``makefile`` names the platform (pytvm runs
    ``"default"``, this machine); ``includes``, ``prologue`` and ``epilogue`` are C added to
    ``main`` (headers, statements before and after the runs); ``pass_config`` applies to the build.
    """

    makefile: str = "default"
    includes: Sequence[str] = ()
    prologue: str = ""
    epilogue: str = ""
    pass_config: Mapping[str, Any] | None = None
    parameters: Mapping[str, Any] = field(default_factory=dict)


class AOTCompiledTestModel(NamedTuple):
    """A model and the AOT executor factory it compiled to."""

    model: AOTTestModel
    executor_factory: Any


def _as_list(models: AOTTestModel | Sequence[AOTTestModel]) -> list[AOTTestModel]:
    return [models] if isinstance(models, AOTTestModel) else list(models)


def _as_module(mod: Any) -> Any:
    """``mod``, or a Relay function as a module whose ``main`` it is (TVM accepts both)."""
    return relay.IRModule.from_expr(mod) if isinstance(mod, relay.Function) else mod


def compile_models(
    models: AOTTestModel | Sequence[AOTTestModel],
    interface_api: str,
    use_unpacked_api: bool,
    workspace_byte_alignment: int = 8,
    constant_byte_alignment: int = 8,
    enable_op_fusion: bool = True,
    pass_config: Mapping[str, Any] | None = None,
    use_runtime_executor: bool = True,
    target: Any = "c",
    workspace_memory_pools: Any = None,
    constant_memory_pools: Any = None,
    schedule_name: str | None = None,
    runtime: Runtime | None = None,
) -> list[AOTCompiledTestModel]:
    """Build each model with the AOT executor (``interface_api``: ``"c"`` or ``"packed"``)."""
    del use_runtime_executor, schedule_name  # pytvm has one AOT path and no schedule names
    executor = Executor(
        "aot",
        {
            "interface-api": interface_api,
            "unpacked-api": use_unpacked_api,
            "workspace-byte-alignment": workspace_byte_alignment,
            "constant-byte-alignment": constant_byte_alignment,
        },
    )
    config = dict(pass_config or {})
    if not enable_op_fusion:
        config["relay.FuseOps.max_depth"] = 1
    compiled = []
    for model in _as_list(models):
        with PassContext(opt_level=3, config={**config, **(model.pass_config or {})}):
            factory = relay.build(
                _as_module(model.module),
                target,
                executor=executor,
                runtime=runtime or Runtime("crt"),
                workspace_memory_pools=workspace_memory_pools,
                constant_memory_pools=constant_memory_pools,
                params=model.params,
                mod_name=model.name,
            )
        compiled.append(AOTCompiledTestModel(model, factory))
    return compiled


def _c_type(dtype: str, where: str) -> str:
    if dtype not in _C_TYPES:
        raise TVMValueError(f"tvm.testing.aot: {where} has dtype {dtype!r}; C main supports "
                            f"{sorted(_C_TYPES)}")  # fmt: skip
    return _C_TYPES[dtype]


def _literal(value: Any, dtype: str) -> str:
    if dtype.startswith("float"):
        v = float(value)
        if math.isnan(v):
            return "NAN"
        if math.isinf(v):
            return "INFINITY" if v > 0 else "-INFINITY"
        return f"{v!r}" + ("f" if dtype == "float32" else "")
    if dtype == "bool":
        return "1" if value else "0"
    text = str(int(value))
    return text + ("LL" if dtype == "int64" else "ULL" if dtype == "uint64" else "")


def _array(name: str, data: np.ndarray, const: bool, where: str) -> str:
    dtype = str(data.dtype)
    flat = data.reshape(-1)
    values = ", ".join(_literal(v, dtype) for v in flat) or "0"
    qualifier = "static const" if const else "static"
    size = max(flat.size, 1)
    return (
        f"{qualifier} {_c_type(dtype, where)} {name}[{size}] __attribute__((aligned(16))) = "
        f"{{{values}}};\n"
    )


def _match_outputs(model: AOTTestModel, infos: Sequence[Any]) -> list[tuple[Any, np.ndarray]]:
    expected = [np.asarray(v) for v in model.outputs.values()]
    if len(expected) != len(infos):
        raise TVMValueError(
            f"tvm.testing.aot: model {model.name!r} has {len(infos)} outputs "
            f"({[i.name for i in infos]}); the test gives {len(expected)}"
        )
    names = list(model.outputs)
    if set(names) == {i.name for i in infos}:
        return [(i, np.asarray(model.outputs[i.name])) for i in infos]
    return list(zip(infos, expected, strict=True))


def _model_c(index: int, compiled: AOTCompiledTestModel, print_mismatch: bool) -> tuple[str, str]:
    """The data arrays of one model, and the statements of ``main`` that run and check it."""
    model, factory = compiled
    mod = factory.mod_name
    decls: list[str] = [f'#include "tvmgen_{mod}.h"\n']
    body = [f"  {{ /* model {mod} */\n", f"    struct tvmgen_{mod}_inputs in{index} = {{0}};\n",
            f"    struct tvmgen_{mod}_outputs out{index} = {{0}};\n"]  # fmt: skip
    for k, info in enumerate(factory.inputs):
        if info.name not in model.inputs:
            raise TVMValueError(
                f"tvm.testing.aot: model {model.name!r} needs input {info.name!r}; the test "
                f"gives {sorted(model.inputs)}"
            )
        data = np.ascontiguousarray(model.inputs[info.name], dtype=info.dtype)
        decls.append(_array(f"m{index}_in{k}", data, False, f"input {info.name!r}"))
        body.append(f"    in{index}.{info.c_name} = m{index}_in{k};\n")
    checks = []
    for k, (info, given) in enumerate(_match_outputs(model, factory.outputs)):
        ref = np.ascontiguousarray(given, dtype=info.dtype)
        ctype = _c_type(info.dtype, f"output {info.name!r}")
        decls.append(_array(f"m{index}_ref{k}", ref, True, f"output {info.name!r}"))
        decls.append(f"static {ctype} m{index}_out{k}[{max(ref.size, 1)}] "
                     "__attribute__((aligned(16)));\n")  # fmt: skip
        shape = ", ".join(str(int(d)) for d in ref.shape) or "1"
        decls.append(f"static const long m{index}_shape{k}[] = {{{shape}}};\n")
        body.append(f"    out{index}.{info.c_name} = m{index}_out{k};\n")
        floating = info.dtype.startswith("float")
        tol = model.output_tolerance
        tolerance = repr(float(_DEFAULT_TOLERANCE if tol is None and floating else tol or 0))
        checks.append(
            f"    failed |= check_{'float' if floating else 'int'}("
            f'"{info.name}", m{index}_out{k}, m{index}_ref{k}, {ref.size}, m{index}_shape{k}, '
            f"{max(ref.ndim, 1)}, {tolerance}, {1 if print_mismatch else 0});\n"
        )
    body.append(f"    int32_t status = tvmgen_{mod}_run(&in{index}, &out{index});\n")
    body.append(f'    if (status != 0) {{ printf("tvmgen_{mod}_run returned %d\\n", (int)status); '
                "failed = 1; } else {\n")  # fmt: skip
    body += checks
    body.append("    }\n  }\n")
    return "".join(decls), "".join(body)


_CHECKERS = r"""
static void print_index(size_t flat, const long* shape, int ndim) {
  long index[16];
  int d;
  for (d = ndim - 1; d >= 0; --d) {
    index[d] = (long)(flat % (size_t)shape[d]);
    flat /= (size_t)shape[d];
  }
  printf("Element [");
  for (d = 0; d < ndim; ++d) printf(d ? ", %ld" : "%ld", index[d]);
  printf("]: ");
}

#define PYTVM_AOT_CHECK(NAME, T, DIFF)                                                        \
  static int NAME(const char* name, const void* out, const void* ref, size_t n,               \
                  const long* shape, int ndim, double tol, int verbose) {                     \
    const T* a = (const T*)out;                                                               \
    const T* r = (const T*)ref;                                                               \
    size_t i, bad = 0;                                                                        \
    for (i = 0; i < n; ++i) {                                                                 \
      if (DIFF > tol) {                                                                       \
        if (verbose) {                                                                        \
          if (bad == 0) printf("Output %s: Actual, Reference\n", name);                       \
          print_index(i, shape, ndim);                                                        \
          printf("%f, %f\n", (double)a[i], (double)r[i]);                                     \
        } else if (bad == 0) {                                                                \
          printf("Output %s mismatches at element %lu\n", name, (unsigned long)i);            \
        }                                                                                     \
        ++bad;                                                                                \
      }                                                                                       \
    }                                                                                         \
    if (bad && verbose)                                                                       \
      printf("Mismatched elements: %lu / %lu (%.2f%%)\n", (unsigned long)bad,                 \
             (unsigned long)n, 100.0 * (double)bad / (double)n);                              \
    return bad != 0;                                                                          \
  }
"""


def _main_c(
    compiled: Sequence[AOTCompiledTestModel], runner: AOTTestRunner, print_mismatch: bool
) -> str:
    decls, bodies = [], []
    for index, item in enumerate(compiled):
        d, b = _model_c(index, item, print_mismatch)
        decls.append(d)
        bodies.append(b)
    dtypes = {str(i.dtype) for c in compiled for i in c.executor_factory.outputs}
    float_types = sorted(d for d in dtypes if d.startswith("float"))
    int_types = sorted(d for d in dtypes if not d.startswith("float"))
    # one checker per kind: values are read as the widest type of that kind present
    if len(float_types) > 1 or len(int_types) > 1:
        raise TVMValueError(
            f"tvm.testing.aot: outputs of several float or integer dtypes ({sorted(dtypes)}) "
            "in one test program are not supported; test the models separately"
        )
    checkers = _CHECKERS
    if float_types:
        ftype = _C_TYPES[float_types[0]]
        checkers += f"PYTVM_AOT_CHECK(check_float, {ftype}, fabs((double)a[i] - (double)r[i]))\n"
    if int_types:
        itype = _C_TYPES[int_types[0]]
        checkers += (
            f"PYTVM_AOT_CHECK(check_int, {itype}, "
            "(a[i] > r[i] ? (double)(a[i] - r[i]) : (double)(r[i] - a[i])))\n"
        )
    includes = "".join(f'#include "{h}"\n' for h in runner.includes)
    return (
        "#include <math.h>\n#include <stdint.h>\n#include <stdio.h>\n#include <stddef.h>\n"
        f"{includes}{checkers}\n{''.join(decls)}\n"
        "int main(void) {\n  int failed = 0;\n"
        f"{runner.prologue}\n{''.join(bodies)}{runner.epilogue}\n"
        '  printf(failed ? "AOT_TEST_FAILURE\\n" : "AOT_TEST_SUCCESS\\n");\n'
        "  return failed;\n}\n"
    )


def _compile_program(
    compiled: Sequence[AOTCompiledTestModel], main: str, build_dir: Path, verbose: bool
) -> Path:
    src, include = (
        build_dir / "codegen" / "host" / "src",
        build_dir / "codegen" / "host" / "include",
    )
    src.mkdir(parents=True, exist_ok=True)
    include.mkdir(parents=True, exist_ok=True)
    files: list[str] = []
    flags: list[str] = []
    for item in compiled:
        lib = item.executor_factory.lib
        for name, text in lib.sources.items():
            (src / name).write_text(text)
            files.append(str(src / name))
        for name, text in lib.headers.items():
            (include / name).write_text(text)
        flags += [f for f in lib.cflags if not f.startswith("-DPYTVM_CRT") and f not in flags]
    (build_dir / "main.c").write_text(main)
    exe = build_dir / "aot_test_runner"
    cc = os.environ.get("CC") or shutil.which("cc") or "gcc"
    cmd = [cc, "-std=gnu99", "-O1", *flags, f"-I{include}", str(build_dir / "main.c"), *files,
           "-o", str(exe), "-lm"]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
    if verbose:
        print(" ".join(cmd), proc.stdout, proc.stderr, sep="\n")
    if proc.returncode != 0:
        raise RuntimeError(f"tvm.testing.aot: compiling the test program failed:\n{proc.stderr}")
    return exe


def run_and_check(
    models: AOTCompiledTestModel | Sequence[AOTCompiledTestModel],
    runner: AOTTestRunner,
    interface_api: str,
    debug_calculated_workspaces: bool = False,
    workspace_byte_alignment: int = 8,
    constant_byte_alignment: int = 8,
    data_linkage: Any = None,
    test_dir: str | os.PathLike[str] | None = None,
    verbose: bool = False,
    use_workspace_io: bool = False,
    debug_last_error: bool = False,
    checker: Callable[[str], bool] | None = None,
    print_output_on_mismatch: bool = False,
) -> bool:
    """Write, compile and run the test program of ``models``; raise ``RuntimeError`` with its
    output unless it prints ``AOT_TEST_SUCCESS``. ``checker(base_path)`` may inspect the
    generated C first (``<base_path>/codegen/host/src``); it returning False ends the check.
    """
    del debug_calculated_workspaces, workspace_byte_alignment, constant_byte_alignment
    del data_linkage, use_workspace_io, debug_last_error, interface_api
    compiled = [models] if isinstance(models, AOTCompiledTestModel) else list(models)
    if runner.makefile != "default":
        raise TVMValueError(
            f"tvm.testing.aot: runner {runner.makefile!r}: pytvm runs the test program on this "
            "machine only (makefile 'default')"
        )
    base = Path(test_dir) if test_dir is not None else Path(tempfile.mkdtemp(prefix="aot_test_"))
    try:
        base.mkdir(parents=True, exist_ok=True)
        main = _main_c(compiled, runner, print_output_on_mismatch)
        exe = _compile_program(compiled, main, base, verbose)
        if checker is not None and not checker(str(base)):
            return False
        proc = subprocess.run([str(exe)], capture_output=True, text=True, timeout=600,
                              check=False)  # fmt: skip
        if verbose:
            print(proc.stdout)
        if proc.returncode != 0 or "AOT_TEST_SUCCESS" not in proc.stdout:
            raise RuntimeError(
                f"tvm.testing.aot: the test program failed (exit {proc.returncode}):\n"
                f"{proc.stdout}{proc.stderr}"
            )
        return True
    finally:
        if test_dir is None:
            shutil.rmtree(base, ignore_errors=True)


def compile_and_run(
    models: AOTTestModel | Sequence[AOTTestModel],
    runner: AOTTestRunner,
    interface_api: str,
    use_unpacked_api: bool,
    debug_calculated_workspaces: bool = False,
    workspace_byte_alignment: int = 8,
    constant_byte_alignment: int = 8,
    enable_op_fusion: bool = True,
    data_linkage: Any = None,
    use_runtime_executor: bool = True,
    target: Any = "c",
    target_opts: Mapping[str, Any] | None = None,
    test_dir: str | os.PathLike[str] | None = None,
    verbose: bool = False,
    schedule_name: str | None = None,
    debug_last_error: bool = False,
    checker: Callable[[str], bool] | None = None,
    print_output_on_mismatch: bool = False,
    runtime: Runtime | None = None,
) -> bool:
    """:func:`compile_models` then :func:`run_and_check` (TVM's signature)."""
    if target_opts:
        target = f"{target} " + " ".join(f"{k}={v}" for k, v in target_opts.items())
    compiled = compile_models(
        models,
        interface_api,
        use_unpacked_api,
        workspace_byte_alignment=workspace_byte_alignment,
        constant_byte_alignment=constant_byte_alignment,
        enable_op_fusion=enable_op_fusion,
        pass_config=runner.pass_config,
        use_runtime_executor=use_runtime_executor,
        target=target,
        schedule_name=schedule_name,
        runtime=runtime,
    )
    return run_and_check(
        compiled,
        runner,
        interface_api,
        debug_calculated_workspaces,
        workspace_byte_alignment,
        constant_byte_alignment,
        data_linkage=data_linkage,
        test_dir=test_dir,
        verbose=verbose,
        debug_last_error=debug_last_error,
        checker=checker,
        print_output_on_mismatch=print_output_on_mismatch,
    )


def generate_ref_data(
    mod: Any,
    input_data: Mapping[str, Any],
    params: Mapping[str, Any] | None = None,
    target: Any = "llvm",
) -> dict[str, np.ndarray]:
    """The outputs of ``mod`` (an IRModule or a Relay function) for ``input_data``, from the
    graph executor on this machine:
    ``{"output": y}`` for one output, ``{"output0": ..., "output1": ...}`` for several (or
    the names in ``mod["main"]``'s attribute ``output_tensor_names``).
    """
    mod = _as_module(mod)
    result = relay.create_executor("graph", mod, device=cpu(0), target=target, params=params)
    out = result.evaluate()(**{k: np.asarray(v) for k, v in input_data.items()})
    outputs = list(out) if isinstance(out, (list, tuple)) else [out]
    arrays = [o.numpy() if hasattr(o, "numpy") else np.asarray(o) for o in outputs]
    attrs = getattr(mod["main"], "attrs", None) or {}
    names = list(attrs.get("output_tensor_names", []) or []) if hasattr(attrs, "get") else []
    if len(names) != len(arrays):
        names = ["output"] if len(arrays) == 1 else [f"output{i}" for i in range(len(arrays))]
    return dict(zip(names, arrays, strict=True))
