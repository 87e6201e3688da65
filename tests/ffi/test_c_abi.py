"""The packed C ABI, both ways, on both Python->C paths (fast-call extension and ctypes)."""

from __future__ import annotations

import ctypes
import importlib
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import pytvm
from pytvm.ffi import CFunction, DataType, c_function
from pytvm.testing import compile_c

Getter = Callable[[str], CFunction]

pytestmark = pytest.mark.needs_cc

SOURCE = r"""
#include <string.h>
#include <stdio.h>
#include "pytvm/c_backend_api.h"

#define PACKED(name) \
  TVM_DLL int name(TVMValue* args, int* codes, int n, TVMValue* ret, int* rc, void* res)

PACKED(echo) {
  (void)n; (void)res;
  if (codes[0] == kTVMPackedFuncHandle) TVMFuncRetain(args[0].v_handle);
  *ret = args[0]; *rc = codes[0]; return 0;
}
PACKED(type_of) {
  (void)args; (void)n; (void)res;
  ret->v_int64 = codes[0]; *rc = kTVMArgInt; return 0;
}
PACKED(describe) {
  static char buf[256];
  (void)codes; (void)n; (void)res;
  TVMByteArray* b = (TVMByteArray*)args[1].v_handle;
  snprintf(buf, sizeof(buf), "%s|%d|%g|%u.%u.%u|%d:%d|%d", args[0].v_str, (int)b->size,
           args[2].v_float64, args[3].v_type.code, args[3].v_type.bits, args[3].v_type.lanes,
           args[4].v_device.device_type, args[4].v_device.device_id, (int)args[5].v_int64);
  ret->v_str = buf; *rc = kTVMStr; return 0;
}
PACKED(fill) {
  DLTensor* t = (DLTensor*)args[0].v_handle;
  (void)codes; (void)n; (void)ret; (void)res;
  for (int64_t i = 0; i < t->shape[0]; ++i) ((int32_t*)t->data)[i] = (int32_t)(i * 10);
  *rc = kTVMNullptr; return 0;
}
PACKED(fail_tagged) { (void)args; (void)codes; (void)n; (void)ret; (void)rc; (void)res;
  TVMAPISetLastError("ValueError: bad shape (2, 3)"); return -1; }
PACKED(fail_plain) { (void)args; (void)codes; (void)n; (void)ret; (void)rc; (void)res;
  TVMAPISetLastError("device lost"); return -1; }

/* call_global(name, *args): TVMFuncGetGlobal + TVMFuncCall */
PACKED(call_global) {
  TVMFunctionHandle f; int r;
  (void)res;
  if (TVMFuncGetGlobal(args[0].v_str, &f) != 0) return -1;
  if (f == NULL) { TVMAPISetLastError("AttributeError: no global"); return -1; }
  r = TVMFuncCall(f, args + 1, codes + 1, n - 1, ret, rc);
  TVMFuncFree(f);
  return r;
}
/* call_arg(f, *args): call a function passed as argument */
PACKED(call_arg) {
  (void)res;
  if (codes[0] != kTVMPackedFuncHandle) {
    TVMAPISetLastError("TypeError: want function");
    return -1;
  }
  return TVMFuncCall(args[0].v_handle, args + 1, codes + 1, n - 1, ret, rc);
}
/* what_c_sees(name): call a global that fails, return the error text C read */
PACKED(what_c_sees) {
  static char buf[4096];
  TVMFunctionHandle f; TVMValue r; int c;
  (void)codes; (void)n; (void)res;
  if (TVMFuncGetGlobal(args[0].v_str, &f) != 0 || f == NULL) return -1;
  if (TVMFuncCall(f, NULL, NULL, 0, &r, &c) == 0) { TVMFuncFree(f); return -1; }
  TVMFuncFree(f);
  strncpy(buf, TVMGetLastError(), sizeof(buf) - 1);
  ret->v_str = buf; *rc = kTVMStr; return 0;
}
PACKED(env_lookup) {
  TVMFunctionHandle f;
  (void)codes; (void)res;
  if (TVMBackendGetFuncFromEnv(NULL, args[0].v_str, &f) != 0) return -1;
  int r = TVMFuncCall(f, args + 1, codes + 1, n - 1, ret, rc);
  TVMFuncFree(f);
  return r;
}
PACKED(workspace) {
  (void)args; (void)codes; (void)n; (void)res;
  int64_t* p = (int64_t*)TVMBackendAllocWorkspace(kDLCPU, 0, 1024 * sizeof(int64_t), 0, 64);
  int64_t sum = 0;
  if (p == NULL) return -1;
  for (int i = 0; i < 1024; ++i) p[i] = i;
  for (int i = 0; i < 1024; ++i) sum += p[i];
  if (TVMBackendFreeWorkspace(kDLCPU, 0, p) != 0) return -1;
  ret->v_int64 = sum; *rc = kTVMArgInt; return 0;
}

typedef struct { int32_t* data; int64_t len; } Job;
static int two_phase(int task, TVMParallelGroupEnv* penv, void* cdata) {
  Job* job = (Job*)cdata;
  int64_t chunk = job->len / penv->num_task;
  for (int64_t i = task * chunk; i < (task + 1) * chunk; ++i) job->data[i] = (int32_t)i;
  TVMBackendParallelBarrier(task, penv);
  /* phase 2 reads what the next task wrote in phase 1 */
  int next = (task + 1) % penv->num_task;
  job->data[job->len + task] = job->data[next * chunk];
  return 0;
}
/* parallel(out): out has len + num_task slots; 4 tasks */
PACKED(parallel) {
  DLTensor* t = (DLTensor*)args[0].v_handle;
  Job job = {(int32_t*)t->data, t->shape[0] - 4};
  (void)codes; (void)n; (void)ret; (void)res;
  *rc = kTVMNullptr;
  return TVMBackendParallelLaunch(two_phase, &job, 4);
}
typedef struct { int32_t* data; int outer; } Inner;
static int inner_task(int task, TVMParallelGroupEnv* penv, void* cdata) {
  Inner* in = (Inner*)cdata;
  for (int i = task; i < 4; i += penv->num_task) in->data[in->outer * 4 + i] = in->outer * 100 + i;
  return 0;
}
/* nested_barrier(out): a nested launch whose tasks meet at a barrier */
static int neighbours(int task, TVMParallelGroupEnv* penv, void* cdata) {
  int32_t* d = (int32_t*)cdata;
  for (int i = task; i < 4; i += penv->num_task) d[i] = i + 1;
  TVMBackendParallelBarrier(task, penv);
  for (int i = task; i < 4; i += penv->num_task) d[4 + i] = d[(i + 1) % 4];
  return 0;
}
static int launch_neighbours(int task, TVMParallelGroupEnv* penv, void* cdata) {
  (void)penv;
  return task == 0 ? TVMBackendParallelLaunch(neighbours, cdata, 4) : 0;
}
PACKED(nested_barrier) {
  (void)codes; (void)n; (void)ret; (void)res;
  *rc = kTVMNullptr;
  return TVMBackendParallelLaunch(launch_neighbours, ((DLTensor*)args[0].v_handle)->data, 2);
}
static int outer_task(int task, TVMParallelGroupEnv* penv, void* cdata) {
  Inner in = {(int32_t*)cdata, task};
  (void)penv;
  return TVMBackendParallelLaunch(inner_task, &in, 4);
}
static int fail_in_task_two(int task, TVMParallelGroupEnv* penv, void* cdata) {
  (void)penv; (void)cdata;
  if (task == 2) { TVMAPISetLastError("IndexError: task 2 went out of range"); return -1; }
  return 0;
}
PACKED(parallel_fail) {
  (void)args; (void)codes; (void)n; (void)ret; (void)res;
  *rc = kTVMNullptr;
  return TVMBackendParallelLaunch(fail_in_task_two, NULL, 4);
}
PACKED(nested_parallel) {
  DLTensor* t = (DLTensor*)args[0].v_handle;
  (void)codes; (void)n; (void)ret; (void)res;
  *rc = kTVMNullptr;
  return TVMBackendParallelLaunch(outer_task, t->data, 2);
}
"""


@pytest.fixture(scope="module")
def lib(tmp_path_factory: pytest.TempPathFactory) -> ctypes.CDLL:
    pytvm.ffi.runtime_library()
    return ctypes.CDLL(str(compile_c(SOURCE, tmp_path_factory.mktemp("abi"), "abi")))


@pytest.fixture(params=["fastcall", "ctypes"])
def get(
    request: pytest.FixtureRequest, lib: ctypes.CDLL, monkeypatch: pytest.MonkeyPatch
) -> Getter:
    if request.param == "ctypes":
        monkeypatch.setattr(c_function, "_fast_call", None)
    elif c_function._fast_call is None:
        pytest.skip("fast-call extension not available here")

    def make(name: str) -> CFunction:
        address = ctypes.cast(getattr(lib, name), ctypes.c_void_p).value
        assert address is not None
        return CFunction(address, owner=lib, name=name)

    return make


@pytest.mark.parametrize(
    "value, code",
    [
        (None, 0),
        (7, 1),
        (True, 2),
        (2.5, 3),
        (DataType.parse("float32x4"), 5),
        (pytvm.hexagon(3), 6),
        ("text", 8),
        (b"raw\x00bytes", 9),
    ],
)
def test_values_cross_with_their_type_index(get: Getter, value: object, code: int) -> None:
    assert get("type_of")(value) == code
    if code not in (8, 9):  # strings and bytes come back as copies, checked below
        assert get("echo")(value) == value


def test_c_reads_every_pod_kind(get: Getter) -> None:
    out = get("describe")("héllo", b"12345", 0.25, DataType.parse("int8x2"), pytvm.hexagon(1), -3)
    assert out == "héllo|5|0.25|0.8.2|16:1|-3"


def test_c_writes_ndarray_and_returns_same_object(get: Getter) -> None:
    a = pytvm.nd.empty((5,), "int32")
    get("fill")(a)
    assert a.numpy().tolist() == [0, 10, 20, 30, 40]
    assert get("type_of")(a) == 7
    assert get("echo")(a) is a


def test_c_error_arrives_with_kind_and_message(get: Getter) -> None:
    with pytest.raises(ValueError, match=r"bad shape \(2, 3\)") as info:
        get("fail_tagged")()
    assert isinstance(info.value, pytvm.TVMError)
    with pytest.raises(pytvm.TVMError, match="device lost") as plain:
        get("fail_plain")()
    assert not isinstance(plain.value, ValueError)


def test_c_calls_python_global(get: Getter) -> None:
    pytvm.register_func("testabi.join", lambda a, b, s: f"{a + b}:{s}", override=True)
    assert get("call_global")("testabi.join", 2, 0.5, "x") == "2.5:x"


def test_c_calls_python_function_argument(get: Getter) -> None:
    seen: list[tuple[object, ...]] = []

    def callback(*args: object) -> int:
        seen.append(args)
        return len(args)

    assert get("call_arg")(callback_func := pytvm.ffi.as_packed_func(callback), 1, "a") == 2
    assert seen == [(1, "a")] and callback_func is not None


def test_python_exception_reaches_c_as_error_text(get: Getter) -> None:
    @pytvm.register_func("testabi.raise_key", override=True)
    def raise_key() -> None:
        raise KeyError("weights.bin")

    text = get("what_c_sees")("testabi.raise_key")
    assert text.endswith("KeyError: weights.bin") and "raise_key" in text


def test_python_exception_through_c_is_the_original(get: Getter) -> None:
    original = ValueError("from the callback")

    @pytvm.register_func("testabi.raise_value", override=True)
    def raise_value() -> None:
        raise original

    with pytest.raises(ValueError) as info:
        get("call_global")("testabi.raise_value")
    assert info.value is original


def test_backend_get_func_from_env_finds_global(get: Getter) -> None:
    pytvm.register_func("testabi.triple", lambda x: 3 * x, override=True)
    assert get("env_lookup")("testabi.triple", 14) == 42
    with pytest.raises(AttributeError, match=re.escape("testabi.absent")):
        get("env_lookup")("testabi.absent")


def test_workspace_on_cpu(get: Getter) -> None:
    assert get("workspace")() == sum(range(1024))


def test_parallel_launch_with_barrier(get: Getter) -> None:
    length = 4 * 256
    out = pytvm.nd.array(np.full(length + 4, -1, "int32"))
    get("parallel")(out)
    data = out.numpy()
    assert data[:length].tolist() == list(range(length))
    assert data[length:].tolist() == [256, 512, 768, 0]


def test_nested_parallel_launch_with_barrier_sees_all_phase_one_writes(get: Getter) -> None:
    out = pytvm.nd.array(np.zeros(8, "int32"))
    get("nested_barrier")(out)
    assert out.numpy().tolist() == [1, 2, 3, 4, 2, 3, 4, 1]


def test_nested_parallel_launch_runs_inline(get: Getter) -> None:
    out = pytvm.nd.array(np.full(8, -1, "int32"))
    get("nested_parallel")(out)
    assert out.numpy().tolist() == [0, 1, 2, 3, 100, 101, 102, 103]


def test_worker_task_error_reaches_caller(get: Getter) -> None:
    with pytest.raises(IndexError, match="task 2 went out of range"):
        get("parallel_fail")()


def test_int_out_of_int64_range_is_refused(get: Getter) -> None:
    with pytest.raises(TypeError, match="int64"):
        get("type_of")(1 << 70)


def test_unsupported_argument_type_is_named(get: Getter) -> None:
    with pytest.raises(TypeError, match=re.escape("builtins.set")):
        get("type_of")({1})


ISOLATION_SCRIPT = r"""
import ctypes, sys
import numpy as np
import tvm  # loads another TVM runtime exporting TVMAPISetLastError, TVMBackendParallelLaunch...
import pytvm
from pytvm.ffi import CFunction
pytvm.ffi.runtime_library()
lib = ctypes.CDLL(sys.argv[1])
def get(name):
    return CFunction(ctypes.cast(lib[name], ctypes.c_void_p).value, owner=lib, name=name)
out = pytvm.nd.array(np.full(4 * 256 + 4, -1, "int32"))
get("parallel")(out)
assert out.numpy()[-4:].tolist() == [256, 512, 768, 0], out.numpy()[-4:]
try:
    get("fail_tagged")()
except ValueError as err:
    assert "bad shape" in str(err), err
else:
    raise AssertionError("no error")
print("isolated")
"""


def test_kernels_bind_to_pytvm_runtime_even_with_tvm_loaded_first(
    lib: ctypes.CDLL,
) -> None:
    result = subprocess.run(
        [sys.executable, "-c", ISOLATION_SCRIPT, lib._name],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0 and "isolated" in result.stdout, result.stderr


def test_c_returns_str_and_bytes_arguments(get: Getter) -> None:
    assert get("echo")("héllo") == "héllo"
    assert get("echo")(b"raw\x00bytes") == b"raw\x00bytes"


@pytest.mark.parametrize(
    "func, args, expected",
    [
        (lambda x: x * 2, (21,), 42),
        (lambda x: x / 4, (5,), 1.25),
        (lambda s: s.upper(), ("abc",), "ABC"),
        (lambda b: b[::-1], (b"\x01\x02",), b"\x02\x01"),
        (lambda: None, (), None),
        (lambda d: pytvm.cpu(d.device_id), (pytvm.hexagon(2),), pytvm.cpu(2)),
        (
            lambda t: DataType(t.code, t.bits, 1),
            (DataType.parse("int8x4"),),
            DataType.parse("int8"),
        ),
    ],
)
def test_python_global_returns_each_kind_to_c(
    get: Getter, func: Callable[..., object], args: tuple[object, ...], expected: object
) -> None:
    pytvm.register_func("testabi.ret", func, override=True)
    try:
        assert get("call_global")("testabi.ret", *args) == expected
    finally:
        pytvm.remove_global_func("testabi.ret")


NO_HOOKS_SCRIPT = r"""
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])  # the host runtime alone: pytvm never installed its hooks
lib.pytvm_TVMGetLastError.restype = ctypes.c_char_p
out = ctypes.c_void_p()
assert lib.pytvm_TVMFuncGetGlobal(b"x", ctypes.byref(out)) != 0
print(lib.pytvm_TVMGetLastError().decode())
"""


def test_runtime_without_hooks_says_which_call_failed() -> None:
    path = pytvm.ffi.libinfo.runtime_library_path()
    result = subprocess.run(
        [sys.executable, "-c", NO_HOOKS_SCRIPT, str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("RuntimeError: TVMFuncGetGlobal: ")
    assert "not initialised" in result.stdout


def test_numpy_uint64_passes_and_out_of_range_is_refused(get: Getter) -> None:
    assert get("echo")(np.uint64(5)) == 5
    with pytest.raises(TypeError, match="int64"):
        get("echo")(np.uint64(1 << 63))


def test_str_with_embedded_nul_is_refused(get: Getter) -> None:
    with pytest.raises(TypeError, match="NUL"):
        get("echo")("a\x00b")


def test_unsupported_return_value_names_the_return(get: Getter) -> None:
    pytvm.register_func("testabi.returns_set", lambda: {1}, override=True)
    with pytest.raises(TypeError, match="returned a value C cannot receive"):
        get("call_global")("testabi.returns_set")


C_BOUNDARY_MODULES = {
    "host_library": ["runtime_library", "loaded_library", "when_loaded"],
    "last_error": ["check_call", "take_error", "set_pending"],
    "arg_convert": ["register_arg_setter", "set_dltensor_wrapper", "pack_args", "decode"],
    "c_function": ["CFunction", "CALL_LAYER"],
    "callback": ["function_to_handle", "function_from_handle"],
    "runtime_hooks": ["set_workspace_allocator"],
}


@pytest.mark.parametrize("name", sorted(C_BOUNDARY_MODULES))
def test_c_boundary_module_is_small_and_owns_its_names(name: str) -> None:
    module = importlib.import_module(f"pytvm.ffi.{name}")
    assert module.__file__ is not None
    lines = Path(module.__file__).read_text(encoding="utf-8").count("\n")
    assert lines <= 400, f"pytvm/ffi/{name}.py has {lines} lines; split it (STYLE.md section 2)"
    for attr in C_BOUNDARY_MODULES[name]:
        value = getattr(module, attr)
        if callable(value):
            assert value.__module__ == module.__name__, f"{name}.{attr} is from {value.__module__}"
        assert attr in module.__all__
