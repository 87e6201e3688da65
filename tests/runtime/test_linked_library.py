"""``load_module`` of a ``.tar`` or ``.o`` (``pytvm.runtime.linked_library``): linked into a
shared object first, as TVM's ``load_module`` does, here and on a server.
"""

from __future__ import annotations

import tarfile
from pathlib import Path

import numpy as np
import pytest

import pytvm
from pytvm import rpc, te, tir

pytestmark = pytest.mark.needs_cc

N = 8


def _kernel() -> tir.PrimFunc:
    a = te.placeholder((N,), name="A")
    b = te.compute(a.shape, lambda i: a[i] + 1.0, name="B")
    return te.create_prim_func([a, b]).with_attr("global_symbol", "addone")


def _check(mod: pytvm.runtime.Module, dev: pytvm.Device | None = None) -> None:
    x = pytvm.nd.array(np.arange(N, dtype="float32"), dev)
    y = pytvm.nd.empty((N,), "float32", dev)
    mod["addone"](x, y)
    np.testing.assert_array_equal(y.numpy(), np.arange(N) + 1)


@pytest.mark.parametrize(("target", "member"), [("llvm", "lib0.o"), ("c", "lib0.c")])
def test_a_tar_export_holds_tvms_files_and_loads(tmp_path: Path, target: str, member: str) -> None:
    path = tmp_path / "lib.tar"
    pytvm.build(_kernel(), target=target).export_library(path)
    assert tarfile.open(path).getnames() == [member]
    mod = pytvm.runtime.load_module(path)
    _check(mod)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lib.tar"]  # nothing beside it


def test_an_object_file_loads(tmp_path: Path) -> None:
    path = tmp_path / "lib.o"
    pytvm.build(_kernel(), target="llvm").save(str(path))
    _check(pytvm.runtime.load_module(path))


def test_a_tar_loads_on_a_server(tmp_path: Path) -> None:
    path = tmp_path / "lib.tar"
    pytvm.build(_kernel(), target="llvm").export_library(path)
    sess = rpc.LocalSession()
    sess.upload(str(path))
    _check(sess.load_module("lib.tar"), sess.cpu())
    sess.close()
