"""Unpacked C kernels (``codegen_c_unpacked``): external functions with raw pointers and a
workspace, no runtime; compiled under the CRT's strict flags and run through ctypes.
"""

from __future__ import annotations

import ctypes
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import pytvm
from pytvm import te
from pytvm.codegen.c import codegen_c
from pytvm.codegen.c.prelude import INTEGER_HELPERS, PRELUDE
from pytvm.codegen.c.unpacked import UnpackedSource, codegen_c_unpacked
from pytvm.tir import expr as E
from pytvm.tir import stmt as S
from pytvm.tir.buffer import decl_buffer
from pytvm.tir.function import IRModule, PrimFunc
from pytvm.tir.transform import lower_if_needed

pytestmark = pytest.mark.needs_cc

CRT_MAKEFILE = Path(pytvm.__file__).resolve().parent / "src" / "crt" / "Makefile"
COMPILERS = [cc for cc in ("gcc", "clang") if shutil.which(cc)]


def _strict_flags() -> list[str]:
    text = CRT_MAKEFILE.read_text().replace("\\\n", " ")
    match = re.search(r"^CRT_STRICT_FLAGS\s*:=(.*)$", text, re.MULTILINE)
    assert match is not None
    return ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", *match.group(1).split()]


def _kernels() -> IRModule:
    """A parallel, vectorized kernel; one with a global workspace; one with a local cache."""
    A = te.placeholder((8, 16), name="A")
    B = te.compute((8, 16), lambda i, j: te.sigmoid(A[i, j]) + te.exp(A[i, j]), name="B")
    s1 = te.create_schedule(B.op)
    s1[B].vectorize(B.op.axis[1])
    s1[B].parallel(B.op.axis[0])

    P = te.placeholder((64,), name="P")
    Q = te.compute((64,), lambda i: P[i] * 2.0, name="Q")
    R = te.compute((64,), lambda i: Q[63 - i] + P[i], name="R")  # Q is a workspace
    s2 = te.create_schedule(R.op)

    k = te.reduce_axis((0, 20), name="k")
    X = te.placeholder((13, 20), name="X")
    W = te.placeholder((20, 24), name="W")
    Y = te.compute((13, 24), lambda i, j: te.sum(X[i, k] * W[k, j], axis=k), name="Y")
    s3 = te.create_schedule(Y.op)
    YL = s3.cache_write(Y, "local")
    yo, _ = s3[Y].split(Y.op.axis[1], factor=8)
    s3[YL].compute_at(s3[Y], yo)
    s3[Y].parallel(Y.op.axis[0])
    funcs = {
        "ew": te.lower_schedule(s1, [A, B], "ew"),
        "reverse": te.lower_schedule(s2, [P, R], "reverse"),
        "matmul": te.lower_schedule(s3, [X, W, Y], "matmul"),
    }
    return lower_if_needed(IRModule(funcs))


@pytest.fixture(scope="module")
def unpacked() -> UnpackedSource:
    return codegen_c_unpacked(_kernels(), "tvmgen_t_", "c")


def test_unpacked_kernels_are_plain_c_functions(unpacked: UnpackedSource) -> None:
    src = unpacked.source
    for banned in ("c_runtime_api.h", "TVMBackend", "TVMValue", "pytvm_parallel", "TVMAPI"):
        assert banned not in src
    assert [k.symbol for k in unpacked.kernels] == [
        "tvmgen_t_ew",
        "tvmgen_t_reverse",
        "tvmgen_t_matmul",
    ]
    ew = unpacked.kernels[0]
    assert ew.prototype.startswith("int32_t tvmgen_t_ew(float* restrict A, float* restrict B")
    assert ew.prototype.endswith("uint8_t* restrict workspace);")
    assert ew.param_types == ("float", "float")
    scratch = {k.name: k.scratch_bytes for k in unpacked.kernels}
    assert scratch == {"ew": 0, "reverse": 64 * 4, "matmul": 0}  # the 8-float cache is on the stack


@pytest.mark.parametrize("cc", COMPILERS)
def test_unpacked_kernels_compile_strict_and_match_numpy(
    cc: str, unpacked: UnpackedSource, tmp_path: Path
) -> None:
    source = tmp_path / "k.c"
    source.write_text(unpacked.source)
    lib_path = tmp_path / "k.so"
    proc = subprocess.run(
        [
            cc,
            *_strict_flags(),
            "-O2",
            "-march=native",
            "-fPIC",
            "-shared",
            str(source),
            "-o",
            str(lib_path),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    lib = ctypes.CDLL(str(lib_path))
    rng = np.random.default_rng(3)

    def call(name: str, *arrays: np.ndarray, scratch: int = 0) -> None:
        fn = getattr(lib, f"tvmgen_t_{name}")
        fn.restype = ctypes.c_int32
        workspace = np.zeros(max(scratch, 1), np.uint8)
        args = [ctypes.c_void_p(a.ctypes.data) for a in (*arrays, workspace)]
        assert fn(*args) == 0

    a = rng.standard_normal((8, 16)).astype(np.float32)
    b = np.zeros_like(a)
    call("ew", a, b)
    np.testing.assert_allclose(b, 1 / (1 + np.exp(-a)) + np.exp(a), rtol=1e-5)
    p = rng.standard_normal(64).astype(np.float32)
    r = np.zeros_like(p)
    call("reverse", p, r, scratch=unpacked.kernels[1].scratch_bytes)
    np.testing.assert_allclose(r, p[::-1] * 2 + p, rtol=1e-6)
    x = rng.standard_normal((13, 20)).astype(np.float32)
    w = rng.standard_normal((20, 24)).astype(np.float32)
    y = np.zeros((13, 24), np.float32)
    call("matmul", x, w, y)
    np.testing.assert_allclose(y, x @ w, rtol=1e-4, atol=1e-5)


def test_scratch_of_no_constant_size_is_refused_naming_the_kernel() -> None:
    a, b = E.Var("a", "handle"), E.Var("b", "handle")
    A, B = decl_buffer((1,), "int32", "A"), decl_buffer((4,), "float32", "B")
    n = E.Var("n", "int32")
    T = decl_buffer((n,), "float32", "T", scope="global")
    zero = E.IntImm("int32", 0)
    body = S.LetStmt(
        n,
        E.BufferLoad(A, (zero,)),
        S.Allocate(
            T,
            S.SeqStmt(
                (
                    S.BufferStore(T, E.FloatImm("float32", 1.0), (zero,)),
                    S.BufferStore(B, E.BufferLoad(T, (zero,)), (zero,)),
                )
            ),
        ),
    )
    func = PrimFunc((a, b), body, {a: A, b: B}, {"global_symbol": "dyn"})
    mod = lower_if_needed(IRModule({"dyn": func}))
    with pytest.raises(
        ValueError, match="kernel dyn: scratch buffer T has a size that is not constant"
    ):
        codegen_c_unpacked(mod, "tvmgen_t_")


def test_symbolic_shapes_are_refused() -> None:
    n = te.var("n")
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: A[i] + 1.0, name="B")
    mod = lower_if_needed(
        IRModule({"inc": te.lower_schedule(te.create_schedule(B.op), [A, B], "inc")})
    )
    with pytest.raises(ValueError, match="kernel inc takes scalar parameters"):
        codegen_c_unpacked(mod)


def test_packed_output_keeps_its_prelude() -> None:
    assert PRELUDE.endswith(INTEGER_HELPERS)
    assert '#include "pytvm/c_runtime_api.h"' in codegen_c(_kernels())
