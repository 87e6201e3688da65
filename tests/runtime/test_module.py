from __future__ import annotations

import functools
import re
import shutil
import struct
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import pytvm
from pytvm.ffi import c_function, host_library
from pytvm.runtime import BenchmarkResult, Module, load_module
from pytvm.testing import compile_c

pytestmark = pytest.mark.needs_cc

KERNELS = r"""
#include <string.h>
#include "pytvm/c_backend_api.h"
void* __tvm_module_ctx = NULL;
static int64_t g_calls = 0;

#define PACKED(name) \
  TVM_DLL int name(TVMValue* args, int* codes, int n, TVMValue* ret, int* rc, void* res)

PACKED(vadd) {
  DLTensor *a = (DLTensor*)args[0].v_handle, *b = (DLTensor*)args[1].v_handle,
           *c = (DLTensor*)args[2].v_handle;
  (void)codes; (void)n; (void)ret; (void)res;
  for (int64_t i = 0; i < a->shape[0]; ++i)
    ((float*)c->data)[i] = ((float*)a->data)[i] + ((float*)b->data)[i];
  *rc = kTVMNullptr;
  return 0;
}
PACKED(counted) {
  (void)args; (void)codes; (void)n; (void)res;
  volatile int64_t spin = 0;
  for (int i = 0; i < 20000; ++i) spin += i;
  ret->v_int64 = ++g_calls; *rc = kTVMArgInt; return 0;
}
PACKED(resource) {
  (void)args; (void)codes; (void)n;
  ret->v_handle = res; *rc = kTVMOpaqueHandle; return 0;
}
/* echo(x): x back with its type index (int, float, str) */
PACKED(echo) {
  (void)n; (void)res;
  *ret = args[0]; *rc = codes[0]; return 0;
}
/* mix(int, float, str, bytes, float32 NDArray): the sum of all, str and bytes by length */
PACKED(mix) {
  (void)res;
  if (n != 5 || codes[0] != kTVMArgInt || codes[1] != kTVMArgFloat || codes[2] != kTVMStr ||
      codes[3] != kTVMBytes || codes[4] != kTVMDLTensorHandle) {
    TVMAPISetLastError("TypeError: mix(int, float, str, bytes, NDArray)");
    return -1;
  }
  DLTensor* t = (DLTensor*)args[4].v_handle;
  double total = (double)args[0].v_int64 + args[1].v_float64 + (double)strlen(args[2].v_str) +
                 (double)((TVMByteArray*)args[3].v_handle)->size;
  for (int64_t i = 0; i < t->shape[0]; ++i) total += ((float*)t->data)[i];
  ret->v_float64 = total; *rc = kTVMArgFloat; return 0;
}
PACKED(bad_shape) {
  (void)args; (void)codes; (void)n; (void)ret; (void)rc; (void)res;
  TVMAPISetLastError("ValueError: bad shape");
  return -1;
}
/* par_vadd(a, b, c): c = a + b over TVMBackendParallelLaunch(..., 0) (one task per thread) */
typedef struct { float *a, *b, *c; int64_t n; } VaddJob;
static int vadd_task(int task, TVMParallelGroupEnv* env, void* cdata) {
  VaddJob* job = (VaddJob*)cdata;
  int64_t chunk = (job->n + env->num_task - 1) / env->num_task;
  int64_t end = (task + 1) * chunk < job->n ? (task + 1) * chunk : job->n;
  for (int64_t i = task * chunk; i < end; ++i) job->c[i] = job->a[i] + job->b[i];
  return 0;
}
PACKED(par_vadd) {
  VaddJob job = {(float*)((DLTensor*)args[0].v_handle)->data,
                 (float*)((DLTensor*)args[1].v_handle)->data,
                 (float*)((DLTensor*)args[2].v_handle)->data,
                 ((DLTensor*)args[0].v_handle)->shape[0]};
  (void)codes; (void)n; (void)ret; (void)res;
  *rc = kTVMNullptr;
  return TVMBackendParallelLaunch(vadd_task, &job, 0);
}
/* par_fail(): task 1 of 2 fails (on a worker thread) */
static int fail_task(int task, TVMParallelGroupEnv* env, void* cdata) {
  (void)env; (void)cdata;
  if (task != 1) return 0;
  TVMAPISetLastError("IndexError: task 1 failed");
  return -1;
}
PACKED(par_fail) {
  (void)args; (void)codes; (void)n; (void)ret; (void)rc; (void)res;
  return TVMBackendParallelLaunch(fail_task, NULL, 2);
}
/* via_env(name, x): call name(x) found through the module context */
PACKED(via_env) {
  TVMFunctionHandle f;
  (void)res;
  if (TVMBackendGetFuncFromEnv(__tvm_module_ctx, args[0].v_str, &f) != 0) return -1;
  int r = TVMFuncCall(f, args + 1, codes + 1, n - 1, ret, rc);
  TVMFuncFree(f);
  return r;
}
PACKED(__tvm_main__) {
  (void)codes; (void)n; (void)res;
  ret->v_int64 = args[0].v_int64 * 2; *rc = kTVMArgInt; return 0;
}
"""

HELPER = r"""
#include "pytvm/c_backend_api.h"
TVM_DLL int helper(TVMValue* args, int* codes, int n, TVMValue* ret, int* rc, void* res) {
  (void)codes; (void)n; (void)res;
  ret->v_int64 = args[0].v_int64 + 1000; *rc = kTVMArgInt; return 0;
}
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    workdir = tmp_path_factory.mktemp("modules")
    return compile_c(KERNELS, workdir, "kernels"), compile_c(HELPER, workdir, "helper")


def test_library_module_runs_kernel(built: tuple[Path, Path]) -> None:
    mod = load_module(built[0])
    assert mod.type_key == "library"
    a = pytvm.nd.array(np.arange(8, dtype="float32"))
    c = pytvm.nd.empty((8,), "float32")
    mod["vadd"](a, a, c)
    np.testing.assert_array_equal(c.numpy(), 2 * np.arange(8, dtype="float32"))
    assert mod.get_function("vadd") is mod["vadd"]
    assert mod(21) == 42  # __tvm_main__


def test_kernel_receives_its_module_as_resource_handle(built: tuple[Path, Path]) -> None:
    mod = load_module(built[0])
    assert mod["resource"]().value == mod.handle


def test_missing_function_is_named(built: tuple[Path, Path]) -> None:
    mod = load_module(built[0])
    with pytest.raises(AttributeError, match="'no_such_kernel'"):
        mod["no_such_kernel"]
    assert mod.get_function("no_such_kernel", allow_missing=True) is None


def test_imports_are_searched_by_kernels_and_lookup(built: tuple[Path, Path]) -> None:
    mod, helper = load_module(built[0]), load_module(built[1])
    with pytest.raises(AttributeError, match="helper"):
        mod["via_env"]("helper", 1)
    mod.import_module(helper)
    assert mod.imported_modules == [helper]
    assert mod.get_function("helper", query_imports=True)(1) == 1001
    assert mod["via_env"]("helper", 5) == 1005
    pytvm.register_func("testmod.global_fn", lambda x: -x, override=True)
    try:
        assert mod["via_env"]("testmod.global_fn", 5) == -5
    finally:
        pytvm.remove_global_func("testmod.global_fn")


def test_cyclic_import_is_refused() -> None:
    a, b = Module.from_functions("a", {}), Module.from_functions("b", {})
    a.import_module(b)
    with pytest.raises(ValueError, match="cyclic"):
        b.import_module(a)
    with pytest.raises(ValueError, match="cyclic"):
        a.import_module(a)
    assert a.get_function("missing", query_imports=True, allow_missing=True) is None


def test_save_and_export_load_back(built: tuple[Path, Path], tmp_path: Path) -> None:
    mod = load_module(built[0])
    mod.save(tmp_path / "saved.so")
    mod.export_library(tmp_path / "exported.so")
    for name in ("saved.so", "exported.so"):
        assert load_module(tmp_path / name)(4) == 8
    mod.import_module(load_module(built[1]))
    with pytest.raises(ValueError, match="imported"):
        mod.export_library(tmp_path / "with_imports.so")


def test_load_module_errors(tmp_path: Path) -> None:
    with pytest.raises(OSError, match=re.escape("nothing.so")):
        load_module(tmp_path / "nothing.so")
    (tmp_path / "x.weird").write_text("")
    with pytest.raises(ValueError, match=re.escape("runtime.module.loadfile_weird")):
        load_module(tmp_path / "x.weird")
    (tmp_path / "x.so").write_text("not elf")
    with pytest.raises(
        ValueError, match=re.escape(f"cannot load {tmp_path / 'x.so'}: a text file")
    ):
        load_module(tmp_path / "x.so")


def test_custom_loader_by_extension(tmp_path: Path) -> None:
    pytvm.register_func(
        "runtime.module.loadfile_mytest",
        lambda path: Module.from_functions("mytest", {"path": lambda: path}),
    )
    try:
        (tmp_path / "m.mytest").write_text("")
        mod = load_module(tmp_path / "m.mytest")
        assert mod.type_key == "mytest" and mod["path"]().endswith("m.mytest")
    finally:
        pytvm.remove_global_func("runtime.module.loadfile_mytest")


def test_module_from_python_functions() -> None:
    mod = Module.from_functions("example", {"twice": lambda x: 2 * x, "__tvm_main__": lambda: 7})
    assert mod.type_key == "example"
    assert mod["twice"](21) == 42 and mod.get_function("twice")(1) == 2
    assert mod() == 7
    assert mod.implements_function("twice") and not mod.implements_function("thrice")
    with pytest.raises(ValueError, match="cannot be exported"):
        mod.export_library("unused.so")


def test_parallel_launch_with_pool_size_tasks(built: tuple[Path, Path]) -> None:
    mod = load_module(built[0])
    a = np.random.default_rng(0).standard_normal(1001).astype("float32")
    b = np.arange(1001, dtype="float32")
    c = pytvm.nd.empty((1001,), "float32")
    mod["par_vadd"](pytvm.nd.array(a), pytvm.nd.array(b), c)
    np.testing.assert_array_equal(c.numpy(), a + b)


def test_parallel_task_error_reaches_the_caller(built: tuple[Path, Path]) -> None:
    mod = load_module(built[0])
    host_library.runtime_library().TVMAPISetLastError(b"KeyError: stale")
    with pytest.raises(IndexError, match="task 1 failed"):
        mod["par_fail"]()


def test_time_evaluator_statistics(built: tuple[Path, Path]) -> None:
    mod = load_module(built[0])
    a = pytvm.nd.array(np.ones(256, "float32"))
    result = mod.time_evaluator("vadd", pytvm.cpu(), number=10, repeat=3)(a, a, a)
    assert isinstance(result, BenchmarkResult) and len(result.results) == 3
    assert result.min <= result.median <= result.max
    assert result.mean == pytest.approx(np.mean(result.results))
    assert result.min > 0 and "mean (ms)" in str(result)


def test_time_evaluator_grows_number_to_min_repeat_ms(tmp_path: Path) -> None:
    mod = load_module(compile_c(KERNELS, tmp_path, "fresh"))  # fresh library: own call counter
    result = mod.time_evaluator("counted", pytvm.cpu(), number=1, repeat=1, min_repeat_ms=20)()
    calls = mod["counted"]() - 1
    assert calls > 2  # warm-up + more than the initial single call
    assert result.results[0] * calls >= 0.0199  # the kept repeat lasted >= 20 ms


def test_time_evaluator_on_python_functions_and_bad_args() -> None:
    mod = Module.from_functions("py", {"work": lambda x: sum(range(x))})
    result = mod.time_evaluator("work", pytvm.cpu(), number=5, repeat=2)(100)
    assert len(result.results) == 2 and result.mean > 0
    with pytest.raises(ValueError, match="number > 0"):
        mod.time_evaluator("work", pytvm.cpu(), number=0)(100)


def test_time_evaluator_finds_functions_of_imports(built: tuple[Path, Path]) -> None:
    mod = load_module(built[0])
    mod.import_module(load_module(built[1]))
    result = mod.time_evaluator("helper", pytvm.cpu(), number=3, repeat=2)(1)
    assert len(result.results) == 2 and result.min > 0


def test_rpc_time_evaluator_global_returns_float64_bytes(built: tuple[Path, Path]) -> None:
    mod = load_module(built[0])
    factory = pytvm.get_global_func("runtime.RPCTimeEvaluator")
    feval = factory(mod, "counted", 1, 0, 3, 4, 0, 100, 0, 1, 0, "")
    blob = feval()
    assert isinstance(blob, bytes) and len(blob) == 4 * 8
    assert all(t > 0 for t in struct.unpack("<4d", blob))


def test_export_copies_bytes_exactly(built: tuple[Path, Path], tmp_path: Path) -> None:
    load_module(built[1]).export_library(tmp_path / "copy.so")
    assert (tmp_path / "copy.so").read_bytes() == built[1].read_bytes()
    shutil.copy(built[1], tmp_path / "again.so")
    assert load_module(tmp_path / "again.so")["helper"](1) == 1001


# ------------------------------------------------------------------ fast-call and ctypes paths


@pytest.fixture(params=["fastcall", "ctypes"])
def fresh(
    request: pytest.FixtureRequest,
    built: tuple[Path, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> Callable[[str], pytvm.PackedFunc]:
    """Functions of a fresh copy of the kernels, created on the chosen Python -> C path."""
    if request.param == "ctypes":
        monkeypatch.setattr(c_function, "_fast_call", None)
    elif c_function._fast_call is None:
        pytest.skip("fast-call extension not available here")
    copy = tmp_path / f"kernels_{request.param}.so"
    shutil.copy(built[0], copy)
    mod = load_module(copy)

    def get(name: str) -> pytvm.PackedFunc:
        func = mod[name]
        fast = isinstance(getattr(func, "_invoke"), functools.partial)
        assert fast == (request.param == "fastcall")
        return func

    return get


def test_both_paths_pass_arguments(fresh: Callable[[str], pytvm.PackedFunc]) -> None:
    arr = pytvm.nd.array(np.array([0.5, 1.5, 2.0], dtype="float32"))
    assert fresh("mix")(3, 0.25, "four", b"\x00bytes", arr) == 3 + 0.25 + 4 + 6 + 4.0
    a = pytvm.nd.array(np.arange(4, dtype="float32"))
    c = pytvm.nd.empty((4,), "float32")
    assert fresh("vadd")(a, a, c) is None
    np.testing.assert_array_equal(c.numpy(), [0, 2, 4, 6])


@pytest.mark.parametrize("value", [0, -(1 << 63), (1 << 63) - 1, 2.5, -0.0, "", "héllo"])
def test_both_paths_return_values(fresh: Callable[[str], pytvm.PackedFunc], value: object) -> None:
    out = fresh("echo")(value)
    assert type(out) is type(value) and out == value


def test_both_paths_raise_c_errors(fresh: Callable[[str], pytvm.PackedFunc]) -> None:
    with pytest.raises(ValueError, match=r"^bad shape$") as info:
        fresh("bad_shape")()
    assert isinstance(info.value, pytvm.TVMError)
    with pytest.raises(TypeError, match="mix"):
        fresh("mix")(1, 2, 3, 4, 5)
    with pytest.raises(AttributeError, match="no_such_fn"):
        fresh("via_env")("no_such_fn", 1)


@pytest.mark.parametrize("value", [1 << 63, -(1 << 63) - 1, 1 << 64, "\ud800"])
def test_both_paths_refuse_unpassable_values(
    fresh: Callable[[str], pytvm.PackedFunc], value: object
) -> None:
    with pytest.raises(TypeError, match="cannot be passed to C"):
        fresh("echo")(value)


def test_both_paths_record_a_traced_call(fresh: Callable[[str], pytvm.PackedFunc]) -> None:
    a = pytvm.nd.array(np.arange(4, dtype="float32"))
    c = pytvm.nd.empty((4,), "float32")
    vadd, bad = fresh("vadd"), fresh("bad_shape")
    vadd(a, a, c)  # tracing off: nothing recorded
    with pytvm.trace() as t:
        vadd(a, a, c)
        with pytest.raises(ValueError, match="bad shape"):
            bad()
    vadd(a, a, c)
    assert [(e.layer, e.name, dict(e.attrs)) for e in t.events] == [
        (c_function.CALL_LAYER, "vadd", {"args": 3}),
        (c_function.CALL_LAYER, "bad_shape", {"args": 0, "failed": True}),
    ]
    assert all(e.dur > 0 and e.process == "host" for e in t.events)
