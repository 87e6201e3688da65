# The TVMScript function below is parsed by apache-tvm, not typed Python.
# mypy: disable-error-code="valid-type,untyped-decorator,no-untyped-def"
"""A library built by Apache TVM 0.27 (``tvm.compile`` + ``export_library``) loaded and run by
pytvm, here and on a pytvm RPC server.

Run: ``python examples/06_load_tvm_module.py``. It needs apache-tvm 0.27 (``pip install
apache-tvm``) to build the library; without it, it says so and exits.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from types import ModuleType

import numpy as np

import pytvm
from pytvm import rpc
from pytvm.runtime import load_module

N = 1024


def build_with_tvm(tvm: ModuleType, path: Path) -> Path:
    """Compile ``C = A + B`` with apache-tvm (a TVMScript function) and export a shared object."""
    from tvm.script import tirx as T

    @T.prim_func
    def myadd(
        A: T.Buffer((N,), "float32"), B: T.Buffer((N,), "float32"), C: T.Buffer((N,), "float32")
    ) -> None:
        T.func_attr({"global_symbol": "myadd"})
        for i in range(N):
            C[i] = A[i] + B[i]

    tvm.compile(myadd, target="llvm").export_library(str(path))
    return path


def main() -> None:
    """Build with apache-tvm, then load, run and time with pytvm, locally and remotely."""
    try:
        import tvm
    except ImportError:
        print("skipped: apache-tvm is not installed (pip install apache-tvm builds the library)")
        return
    with tempfile.TemporaryDirectory(prefix="pytvm-example-") as tmp:
        lib = build_with_tvm(tvm, Path(tmp) / "myadd.so")
        print(f"apache-tvm exported {lib.name}")

        a = np.random.default_rng(0).random(N, dtype=np.float32)
        b = np.ones(N, dtype=np.float32)

        mod = load_module(lib)  # pytvm's runtime serves the library's calls into the runtime
        x, y, z = pytvm.nd.array(a), pytvm.nd.array(b), pytvm.nd.empty((N,), "float32")
        mod["myadd"](x, y, z)
        print(f"local myadd matches numpy: {np.allclose(z.numpy(), a + b)}")
        timer = mod.time_evaluator("myadd", pytvm.cpu(), number=100, repeat=3)
        print(f"local time_evaluator: {timer(x, y, z).mean * 1e9:.0f} ns per call")

        with (
            rpc.Server(host="127.0.0.1", port=0, silent=True) as server,
            rpc.connect("127.0.0.1", server.port) as sess,
        ):
            sess.upload(str(lib), "myadd.so")
            rmod = sess.load_module("myadd.so")
            dev = sess.cpu()
            x, y, z = (
                pytvm.nd.array(a, dev),
                pytvm.nd.array(b, dev),
                pytvm.nd.empty((N,), "float32", dev),
            )
            rmod["myadd"](x, y, z)
            print(f"remote myadd on {dev} matches numpy: {np.allclose(z.numpy(), a + b)}")


if __name__ == "__main__":
    main()
