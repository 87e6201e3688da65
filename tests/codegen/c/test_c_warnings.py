"""Generated C compiles warning-free (``-Wall -Wextra -Werror``) under gcc and clang, for the
host and, for system libraries, for the C runtime (``-DPYTVM_CRT=1``).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

import pytvm
from pytvm import te
from pytvm.codegen import codegen_c
from pytvm.ffi.libinfo import include_dir

pytestmark = pytest.mark.needs_cc

CRT_INCLUDE = Path(pytvm.__file__).resolve().parent / "src" / "crt" / "include"
COMPILERS = [cc for cc in ("gcc", "clang") if shutil.which(cc)]


def _kernels() -> dict[str, tuple[te.Schedule, list[te.Tensor]]]:
    n = te.var("n")
    A = te.placeholder((n, 16), name="A")
    B = te.compute((n, 16), lambda i, j: te.sigmoid(A[i, j]) + te.erf(A[i, j]), name="B")
    s1 = te.create_schedule(B.op)
    s1[B].vectorize(B.op.axis[1])
    s1[B].parallel(B.op.axis[0])

    k = te.reduce_axis((0, 20), name="k")
    X = te.placeholder((13, 20), name="X")
    W = te.placeholder((20, 24), name="W")
    Y = te.compute((13, 24), lambda i, j: te.sum(X[i, k] * W[k, j], axis=k), name="Y")
    s2 = te.create_schedule(Y.op)
    YL = s2.cache_write(Y, "local")
    yo, yi = s2[Y].split(Y.op.axis[1], factor=8)
    s2[YL].compute_at(s2[Y], yo)
    s2[Y].vectorize(yi)
    s2[Y].parallel(Y.op.axis[0])

    V = te.placeholder((32,), name="V", dtype="int32")
    J = te.compute((32,), lambda i: te.floordiv(V[i] - 16, 3) + te.floormod(V[i] - 16, 5), name="J")
    s3 = te.create_schedule(J.op)

    P = te.placeholder((64,), name="P")
    Q = te.compute((64,), lambda i: te.exp(P[i]) * 2.0, name="Q")
    R = te.compute((64,), lambda i: Q[63 - i] + P[i], name="R")  # Q is a workspace
    s4 = te.create_schedule(R.op)

    D = te.placeholder((8,), name="D", dtype="float64")
    E = te.compute((8,), lambda i: te.exp(D[i]), name="E")  # a kernel "exp" calling libm's exp
    s5 = te.create_schedule(E.op)

    F = te.placeholder((8,), name="F")
    G = te.extern(
        (8,),
        [F],
        lambda ins, outs: pytvm.tir.call_packed("f", ins[0], outs[0], 2, 0.5, "s"),
        name="G",
    )
    H = te.compute((8,), lambda i: pytvm.tir.call_pure_extern("float32", "my_fn", G[i]), name="H")
    s6 = te.create_schedule(H.op)
    return {
        "vec_par": (s1, [A, B]),
        "tiled": (s2, [X, W, Y]),
        "intdiv": (s3, [V, J]),
        "ws": (s4, [P, R]),
        "exp": (s5, [D, E]),
        "calls": (s6, [F, H]),
    }


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = {}
    folder = tmp_path_factory.mktemp("gen")
    for name, (s, args) in _kernels().items():
        for target in ("c", "c --system-lib"):
            mod = pytvm.lower(s, args, name=name)
            src = folder / f"{name}{'_syslib' if 'system' in target else ''}.c"
            src.write_text(codegen_c(mod, system_lib="system" in target, target_text=target))
            out[src.stem] = src
    return out


@pytest.mark.parametrize("cc", COMPILERS)
def test_generated_c_is_warning_free(cc: str, sources: dict[str, Path], tmp_path: Path) -> None:
    for stem, src in sources.items():
        flags = ["-std=gnu11", "-O2", "-Wall", "-Wextra", "-Werror", f"-I{include_dir()}"]
        host = [cc, *flags, "-march=native", "-fPIC", "-c", str(src), "-o", str(tmp_path / "h.o")]
        result = subprocess.run(host, capture_output=True, text=True, check=False)
        assert result.returncode == 0, f"{stem} ({cc}, host):\n{result.stderr}"
        if stem.endswith("_syslib"):
            crt = [cc, *flags, "-Wno-psabi", "-DPYTVM_CRT=1", f"-I{CRT_INCLUDE}", "-c", str(src)]
            result = subprocess.run(
                [*crt, "-o", str(tmp_path / "c.o")], capture_output=True, text=True, check=False
            )
            assert result.returncode == 0, f"{stem} ({cc}, C runtime):\n{result.stderr}"
