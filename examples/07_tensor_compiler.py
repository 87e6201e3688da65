"""Compile a tensor expression: declare it, schedule it, lower it, build it to C, run and time it.

Run: ``python examples/07_tensor_compiler.py`` (needs a C compiler: cc, gcc or clang).
"""

from __future__ import annotations

import numpy as np

import pytvm
from pytvm import te, topi


def main() -> None:
    """Seed 004's flow, then the same operator from pytvm.topi with its default schedule."""
    n = 1024
    A = te.placeholder((n,), name="A")
    B = te.placeholder((n,), name="B")
    C = te.compute((n,), lambda i: te.exp(A[i]) * B[i], name="C")

    s = te.create_schedule(C.op)
    outer, inner = s[C].split(C.op.axis[0], factor=8)
    s[C].vectorize(inner)
    s[C].parallel(outer)
    print(pytvm.lower(s, [A, B, C], name="exp_mul"))

    # The C path (target "llvm" alone compiles LLVM IR in process, with no C compiler).
    mod = pytvm.build(s, [A, B, C], target="llvm -backend=c", name="exp_mul")
    print(mod.get_source().splitlines()[0])  # the C the system compiler built

    a = pytvm.nd.array(np.random.default_rng(0).random(n, dtype=np.float32))
    b = pytvm.nd.array(np.full(n, 2.0, dtype=np.float32))
    c = pytvm.nd.empty((n,), "float32")
    mod["exp_mul"](a, b, c)
    print("matches numpy:", np.allclose(c.numpy(), np.exp(a.numpy()) * 2.0, rtol=1e-5))
    timing = mod.time_evaluator("exp_mul", pytvm.cpu(), number=100)(a, b, c)
    print(f"time_evaluator: mean {timing.mean * 1e6:.2f} us")

    try:
        mod["exp_mul"](a, b, pytvm.nd.empty((n + 1,), "float32"))
    except ValueError as err:
        print("a wrong call raises ValueError:", err)

    # An operator from pytvm.topi with its default CPU schedule (vector width from the target).
    X = te.placeholder((64, 256), name="X")
    W = te.placeholder((256, 128), name="W")
    Y = topi.nn.matmul(X, W)
    with pytvm.target.Target("llvm -mcpu=native"):
        sched = topi.x86.schedule_matmul([Y])
        lib = pytvm.build(sched, [X, W, Y], name="matmul")
    x = np.random.default_rng(1).random((64, 256), dtype=np.float32)
    w = np.random.default_rng(2).random((256, 128), dtype=np.float32)
    y = pytvm.nd.empty((64, 128), "float32")
    lib["matmul"](pytvm.nd.array(x), pytvm.nd.array(w), y)
    print("topi matmul matches numpy:", np.allclose(y.numpy(), x @ w, rtol=1e-4))


if __name__ == "__main__":
    main()
