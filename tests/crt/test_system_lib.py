"""A system library linked into the device binary is called through MinRPC's system_lib()."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytvm import rpc
from pytvm.crt import device_binary

pytestmark = pytest.mark.needs_cc

SYSTEM_LIB = r"""
#include "pytvm_crt/module.h"
#include "pytvm/c_backend_api.h"

static int32_t twice(TVMValue* args, int32_t* codes, int32_t n, TVMValue* ret, int32_t* ret_code,
                     void* res) {
  (void)res;
  if (n != 1 || codes[0] != kTVMArgInt) {
    TVMAPISetLastError("TypeError: twice: expected one int");
    return -1;
  }
  ret->v_int64 = 2 * args[0].v_int64;
  *ret_code = kTVMArgInt;
  return 0;
}

static const char kNames[] = "\x01" "twice\0";
static const TVMBackendPackedCFunc kFuncs[] = {(TVMBackendPackedCFunc)twice};
static const TVMFuncRegistry kRegistry = {kNames, kFuncs};
static const TVMModule kModule = {&kRegistry};
const TVMModule* TVMSystemLibEntryPoint(void) { return &kModule; }
"""


@pytest.mark.parametrize("minimal", [False, True], ids=["full", "minimal"])
def test_system_lib_function_runs_on_the_device(tmp_path: Path, minimal: bool) -> None:
    src = tmp_path / "twice_lib.c"
    src.write_text(SYSTEM_LIB)
    sess = rpc.PopenSession(str(device_binary(minimal=minimal, system_lib=[src])))
    try:
        lib = sess.get_function("runtime.SystemLib")()
        assert lib["twice"](21) == 42
        with pytest.raises(AttributeError, match="no function 'missing'"):
            lib["missing"]
        with pytest.raises(TypeError) as err:
            lib["twice"]("not an int")
        if not minimal:  # the minimal configuration keeps the error kind, not its text
            assert "twice: expected one int" in str(err.value)
        assert lib["twice"](-4) == -8  # the session survives the error
    finally:
        sess.close()


def test_system_lib_must_be_c_sources(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="not a C file"):
        device_binary(system_lib=[tmp_path / "missing.c"])
