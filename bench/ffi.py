"""Packed-call overhead: pytvm against a plain Python call and apache-tvm's tvm_ffi, same run.

Pinned to one core (``os.sched_setaffinity``); each figure is the best of several repeats of a
tight loop, in nanoseconds per call. Run: ``make bench`` or ``python bench/ffi.py``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import timeit
from collections.abc import Callable
from pathlib import Path

import numpy as np

import pytvm
from pytvm.ffi import libinfo
from pytvm.runtime import load_module

_NOP_C = r"""
#include "pytvm/c_backend_api.h"
TVM_DLL int nop(TVMValue* args, int* codes, int n, TVMValue* ret, int* ret_code, void* res) {
  (void)args; (void)codes; (void)n; (void)ret; (void)res;
  *ret_code = kTVMNullptr;
  return 0;
}
"""


def _build_nop(workdir: Path) -> pytvm.PackedFunc:
    src = workdir / "nop.c"
    src.write_text(_NOP_C)
    return load_module(libinfo.compile_shared([src], workdir / "nop.so"))["nop"]


def _ns(func: Callable[..., object], args: tuple[object, ...], number: int, repeat: int) -> float:
    timer = timeit.Timer("f(*a)", globals={"f": func, "a": args})
    return min(timer.repeat(repeat=repeat, number=number)) / number * 1e9


def main() -> None:
    """Time each packed-call case against pytvm, tvm_ffi and a plain call; print the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--number", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=5)
    opts = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})

    import tvm_ffi

    with tempfile.TemporaryDirectory() as tmp:
        c_nop = _build_nop(Path(tmp))
        py_nop = pytvm.ffi.as_packed_func(lambda *args: None, "py_nop")
        tvm_c_nop = tvm_ffi.get_global_func("testing.nop")
        tvm_py_nop = tvm_ffi.convert(lambda *args: None)

        def plain(*args: object) -> None:
            return None

        x_pytvm = pytvm.nd.array(np.zeros(16, "float32"))
        x_tvm = tvm_ffi.from_dlpack(np.zeros(16, "float32"))
        cases = [
            ("Python->C, 0 args", (), (), c_nop, tvm_c_nop),
            ("Python->C, 1 int", (1,), (1,), c_nop, tvm_c_nop),
            ("Python->C, 4 ints", (1, 2, 3, 4), (1, 2, 3, 4), c_nop, tvm_c_nop),
            ("Python->C, 1 float, 1 str", (1.5, "abc"), (1.5, "abc"), c_nop, tvm_c_nop),
            ("Python->C, NDArray", (x_pytvm,), (x_tvm,), c_nop, tvm_c_nop),
            ("Python->Python, 0 args", (), (), py_nop, tvm_py_nop),
            ("Python->Python, 1 int", (1,), (1,), py_nop, tvm_py_nop),
            ("Python->Python, 4 ints", (1, 2, 3, 4), (1, 2, 3, 4), py_nop, tvm_py_nop),
        ]
        print(
            f"packed-call overhead, ns/call (best of {opts.repeat} x {opts.number}), "
            f"pinned to one core; tvm_ffi {tvm_ffi.__version__}"
        )
        header = f"{'case':28} {'plain py':>9} {'pytvm':>9} {'tvm_ffi':>9} {'pytvm/tvm_ffi':>14}"
        print(header)
        print("-" * len(header))
        for name, ours, theirs, pf, tf in cases:
            base = _ns(plain, ours, opts.number, opts.repeat)
            mine = _ns(pf, ours, opts.number, opts.repeat)
            peer = _ns(tf, theirs, opts.number, opts.repeat)
            print(f"{name:28} {base:9.0f} {mine:9.0f} {peer:9.0f} {mine / peer:14.2f}")
        fast = pytvm.ffi.c_function._fast_call is not None
        print(f"\nPython->C path: {'fast-call extension' if fast else 'ctypes (no extension)'}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
