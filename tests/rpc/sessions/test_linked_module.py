"""TVM's ``tvm.rpc.server.download_linked_module`` (``pytvm.rpc.sessions.linked_module``): the
server links an uploaded ``.tar`` or ``.o`` and sends the shared object back; only workspace
files, never through a link out of it; a server without a C compiler says so.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import pytvm
from pytvm import rpc, te, tir
from pytvm.ffi.errors import TVMError, TVMValueError
from pytvm.rpc.services.server import Server
from pytvm.rpc.sessions import linked_module
from pytvm.rpc.sessions.workspace import Workspace

pytestmark = pytest.mark.needs_cc

N = 8


def _kernel() -> tir.PrimFunc:
    a = te.placeholder((N,), name="A")
    b = te.compute(a.shape, lambda i: a[i] * 3.0, name="B")
    return te.create_prim_func([a, b]).with_attr("global_symbol", "triple")


def _check_linked(blob: bytes, tmp_path: Path) -> None:
    path = tmp_path / "linked.so"
    path.write_bytes(blob)
    mod = pytvm.runtime.load_module(path)
    x = pytvm.nd.array(np.arange(N, dtype="float32"))
    y = pytvm.nd.empty((N,), "float32")
    mod(x, y)  # the library's entry function: its only kernel
    np.testing.assert_array_equal(y.numpy(), np.arange(N) * 3)


@pytest.fixture(scope="module")
def server() -> Iterator[int]:
    with Server(port=0, key="link", silent=True) as srv:
        yield srv.port


@pytest.mark.parametrize(
    ("target", "name"), [("llvm", "lib.tar"), ("c", "lib.tar"), ("llvm", "lib.o")]
)
def test_a_server_links_what_was_uploaded(
    server: int, tmp_path: Path, target: str, name: str
) -> None:
    built = pytvm.build(_kernel(), target=target)
    local = tmp_path / name
    if name.endswith(".o"):
        built.save(str(local))
    else:
        built.export_library(local)
    sess = rpc.connect("127.0.0.1", server, key="link")
    sess.upload(str(local))
    _check_linked(sess.download_linked_module(name), tmp_path)
    assert sess.listdir(".") == [name]  # linked elsewhere: nothing left in the workspace
    sess.close()


def test_a_local_session_links_too(tmp_path: Path) -> None:
    pytvm.build(_kernel(), target="llvm").export_library(tmp_path / "lib.tar")
    sess = rpc.LocalSession()
    sess.upload(str(tmp_path / "lib.tar"))
    _check_linked(sess.download_linked_module("lib.tar"), tmp_path)
    sess.close()


def test_only_object_files_tars_and_shared_objects(tmp_path: Path) -> None:
    with Workspace.create() as ws:
        ws.write("lib.so", b"\x7fELF shared")
        assert linked_module.download_linked_module(ws, "lib.so") == b"\x7fELF shared"
        ws.write("notes.txt", b"x")
        with pytest.raises(TVMValueError, match=r"do not know how to link 'notes\.txt'"):
            linked_module.download_linked_module(ws, "notes.txt")


def test_only_files_inside_the_workspace(tmp_path: Path) -> None:
    outside = tmp_path / "outside.tar"
    pytvm.build(_kernel(), target="llvm").export_library(outside)
    with Workspace.create() as ws:
        with pytest.raises(TVMValueError, match="outside the session workspace"):
            linked_module.download_linked_module(ws, str(outside))
        (Path(ws.path) / "link.tar").symlink_to(outside)
        with pytest.raises(TVMValueError, match="through a symbolic link outside"):
            linked_module.download_linked_module(ws, "link.tar")


def test_a_server_without_a_c_compiler_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(linked_module, "find_cc", lambda: None)
    with Workspace.create() as ws:
        ws.write("lib.tar", b"archive")
        with pytest.raises(TVMError, match=r"this server has no C compiler to link 'lib\.tar'"):
            linked_module.download_linked_module(ws, "lib.tar")
