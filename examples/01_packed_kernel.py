"""Compile a packed C kernel, load it, call it on NDArrays, time it, and call Python from C.

Run: ``python examples/01_packed_kernel.py`` (needs a C compiler: cc, gcc or clang).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

import pytvm
from pytvm.ffi import libinfo
from pytvm.runtime import load_module

HERE = Path(__file__).resolve().parent


def build(workdir: Path) -> Path:
    """Compile examples/kernels.c into ``workdir/kernels.so`` with the system C compiler.

    The same as ``cc -std=c11 -O2 -fPIC -shared -I<pytvm include dir> kernels.c -o kernels.so``;
    ``libinfo.include_dir()`` is the directory holding ``pytvm/c_backend_api.h``.
    """
    return libinfo.compile_shared([HERE / "kernels.c"], workdir / "kernels.so")


def main() -> None:
    """Build, load, run and time the kernels."""
    with tempfile.TemporaryDirectory(prefix="pytvm-example-") as tmp:
        lib = build(Path(tmp))
        print(f"compiled {lib.name} with {libinfo.find_cc()}")

        # any .so exporting packed C functions
        mod = load_module(lib)
        a = pytvm.nd.array(np.arange(4, dtype="float32"))
        c = pytvm.nd.empty((4,), "float32")
        mod["vadd"](a, a, c)  # C receives DLTensor* (type index 7)
        print("vadd(a, a, c): c =", c.numpy().tolist())

        # time_evaluator runs the function `number` times per repeat and reports seconds per call
        timer = mod.time_evaluator("vadd", pytvm.cpu(), number=100, repeat=3)
        print(f"time_evaluator: mean {timer(a, a, c).mean * 1e9:.0f} ns per call")

        # C -> Python: call_python looks the function up in the global registry
        @pytvm.register_func("example.add_one")
        def add_one(x: int) -> int:
            return x + 1

        print("call_python('example.add_one', 41) =", mod["call_python"]("example.add_one", 41))

        # errors keep their kind across the C boundary, both ways
        try:
            mod["vadd"](a, a)
        except TypeError as err:
            print(f"vadd(a, a) raised TypeError: {err}")


if __name__ == "__main__":
    main()
