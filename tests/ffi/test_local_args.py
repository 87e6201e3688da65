"""A tensor whose memory lives in another process never reaches local C code."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import pytvm
from pytvm import rpc
from pytvm.ffi.local_args import check_local_args
from pytvm.runtime import load_module
from pytvm.testing import compile_c
from pytvm.testing.rpc import service_process

KERNELS = r"""
#include "pytvm/c_backend_api.h"
void* __tvm_module_ctx = NULL;
/* total(a, ...): the sum of the float32 vector a (only argument 0 is read) */
TVM_DLL int total(TVMValue* args, int* codes, int n, TVMValue* ret, int* rc, void* res) {
  DLTensor* a = (DLTensor*)args[0].v_handle;
  double sum = 0;
  (void)codes; (void)n; (void)res;
  for (int64_t i = 0; i < a->shape[0]; ++i) sum += ((float*)a->data)[i];
  ret->v_float64 = sum; *rc = kTVMArgFloat; return 0;
}
/* total_of(name): total() of the array the global function name returns */
TVM_DLL int total_of(TVMValue* args, int* codes, int n, TVMValue* ret, int* rc, void* res) {
  TVMFunctionHandle f;
  TVMValue got; int got_code;
  (void)codes; (void)n;
  if (TVMBackendGetFuncFromEnv(__tvm_module_ctx, args[0].v_str, &f) != 0) return -1;
  int r = TVMFuncCall(f, NULL, NULL, 0, &got, &got_code);
  TVMFuncFree(f);
  if (r != 0) return r;
  return total(&got, &got_code, 1, ret, rc, res);
}
"""

# Run in a child process: before the check, the first call below killed the process (SIGSEGV).
CHILD = r"""
import sys
import numpy as np
import pytvm
from pytvm import rpc
from pytvm.runtime import load_module

mod = load_module(sys.argv[1])
sess = rpc.connect("127.0.0.1", int(sys.argv[2]))
remote = pytvm.nd.array(np.ones(4, "float32"), sess.cpu())
local = pytvm.nd.array(np.ones(4, "float32"))
sub = pytvm.nd.array(np.ones(4, "float32"), sess.cpu())
sub.__class__ = type("RemoteSub", (pytvm.nd.NDArray,), {})
pytvm.register_func("test.local_args.remote", lambda: remote)
timer = mod.time_evaluator("total", pytvm.cpu(), number=1, repeat=1)
calls = {
    "fast": lambda: mod["total"](remote),
    "ctypes": lambda: mod["total"]._call_ctypes(remote),
    "position": lambda: mod["total"](local, remote),
    "subclass": lambda: mod["total"](sub),
    "time_call": lambda: timer(remote),
    "returned": lambda: mod["total_of"]("test.local_args.remote"),
}
for label, call in calls.items():
    try:
        print(label, "returned", call())
    except ValueError as err:
        print(label, "refused:", err)
print("copied", mod["total"](remote.copyto(pytvm.cpu())))
sess.close()
"""

SERVER = ("server", "--host", "127.0.0.1", "--port", "0", "--port-end", "1", "--silent")


@pytest.mark.needs_cc
def test_remote_tensor_passed_to_a_local_c_function_is_refused_not_a_crash(
    tmp_path: Path,
) -> None:
    lib = compile_c(KERNELS, tmp_path, "local_args")
    with service_process(*SERVER) as (_, port):
        child = subprocess.run(
            [sys.executable, "-c", CHILD, str(lib), str(port)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert child.returncode == 0, f"child died ({child.returncode}):\n{child.stderr[-3000:]}"
    lines = dict(line.split(" ", 1) for line in child.stdout.splitlines())
    advice = "lives in another process; copy it here with .copyto(pytvm.cpu())"
    assert lines["fast"] == f"refused: total: argument 0: NDArray on remote[0]:cpu(0) {advice}"
    assert lines["ctypes"] == lines["fast"]
    assert lines["time_call"] == lines["fast"]
    assert lines["position"].startswith("refused: total: argument 1: NDArray on remote[0]")
    assert lines["subclass"].startswith("refused: total: argument 0: RemoteSub on remote[0]")
    assert lines["returned"].startswith(
        "refused: test.local_args.remote: the returned value: NDArray on remote[0]:cpu(0) "
    )
    assert lines["copied"] == "4.0"


@pytest.mark.needs_cc
def test_remote_functions_and_modules_stay_usable_from_local_c(tmp_path: Path) -> None:
    source = r"""
    #include "pytvm/c_backend_api.h"
    /* call(f, args...): f(args...) through the C API */
    TVM_DLL int call(TVMValue* args, int* codes, int n, TVMValue* ret, int* rc, void* res) {
      (void)res;
      return TVMFuncCall(args[0].v_handle, args + 1, codes + 1, n - 1, ret, rc);
    }
    /* echo(x): x back as it came */
    TVM_DLL int echo(TVMValue* args, int* codes, int n, TVMValue* ret, int* rc, void* res) {
      (void)n; (void)res;
      *ret = args[0]; *rc = codes[0]; return 0;
    }
    """
    mod = load_module(compile_c(source, tmp_path, "callers"))
    pytvm.register_func("test.local_args.add", lambda a, b: a + b, override=True)
    try:
        sess = rpc.LocalSession()
        remote_add = sess.get_function("test.local_args.add")
        assert mod["call"](remote_add, 5, 6) == 11  # the call from C travels over RPC
        with pytest.raises(ValueError, match="cannot pass the device cpu"):
            mod["call"](remote_add, pytvm.cpu(0), 0)  # and its arguments are checked there
        syslib = sess.system_lib()
        assert mod["echo"](syslib) is syslib
    finally:
        pytvm.remove_global_func("test.local_args.add")


@pytest.mark.needs_cc
def test_fast_check_refuses_a_masked_device_before_any_c_code_runs(tmp_path: Path) -> None:
    mod = load_module(compile_c(KERNELS, tmp_path, "masked"))
    sess = rpc.LocalSession()  # its memory is in this process, but its devices are RPC devices
    remote = pytvm.nd.array(np.arange(3, dtype="float32"), sess.cpu())
    with pytest.raises(ValueError, match=r"^total: argument 0: NDArray on remote\[\d+\]:cpu"):
        mod["total"](remote)
    assert mod["total"](remote.copyto(pytvm.cpu())) == 3.0


def test_check_local_args_for_other_call_paths() -> None:
    sess = rpc.LocalSession()
    remote = pytvm.nd.empty((2,), "int8", sess.cpu())
    check_local_args("f", [1, 2.0, "s", b"b", None, pytvm.nd.empty((2,), "int8"), pytvm.cpu()])
    with pytest.raises(ValueError, match=r"^f: argument 2: NDArray on remote\[\d+\]:cpu\(0\) "):
        check_local_args("f", [1, pytvm.nd.empty((2,), "int8"), remote])
