"""What a served session offers (``pytvm.rpc.sessions.workspace_functions``): TVM's
``rpc.CreatePipeClient`` runs what ``rpc.PopenSession`` may run and nothing else, and loaders
registered by an earlier server environment of the process are not confined twice.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import pytvm
from pytvm import te
from pytvm.rpc.services.server import Server
from pytvm.rpc.sessions.client import connect
from pytvm.rpc.sessions.workspace import Workspace
from pytvm.rpc.sessions.workspace_functions import confined_functions

CTOR = "rpc.CreatePipeClient"


def _pipe_server_script(path: Path) -> Path:
    path.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m pytvm.rpc.services.pipe_server "$@"\n')
    path.chmod(0o700)
    return path


def test_create_pipe_client_runs_only_the_listed_executables(tmp_path: Path) -> None:
    listed = _pipe_server_script(tmp_path / "listed.sh")
    other = _pipe_server_script(tmp_path / "other.sh")
    with Server(port=0, key="k", silent=True, popen_executables=[str(listed)]) as server:
        args = [CTOR, str(listed)]
        with connect("127.0.0.1", server.port, "k", session_constructor_args=args) as sess:
            assert sess.get_function("rpc.test.addone")(1) == 2
        for command, message in [
            (str(other), r"allowed: .*listed\.sh"),
            ("sh", "no file 'sh' in the session workspace"),  # no PATH look-up here
        ]:
            with pytest.raises((ValueError, OSError), match=message):
                connect("127.0.0.1", server.port, "k", session_constructor_args=[CTOR, command])


def test_create_pipe_client_here_starts_a_command(tmp_path: Path) -> None:
    script = _pipe_server_script(tmp_path / "server.sh")
    module = pytvm.get_global_func("rpc.CreatePipeClient")(str(script))
    sess = pytvm.rpc.RPCSession(module.session)
    assert sess.get_function("rpc.test.addone")(41) == 42
    sess.close()
    with pytest.raises(ValueError, match="expected a command"):
        pytvm.get_global_func("rpc.CreatePipeClient")()


@pytest.mark.needs_cc
def test_loaders_confined_by_an_earlier_environment_are_not_confined_twice(
    tmp_path: Path,
) -> None:
    a = te.placeholder((4,), name="A")
    b = te.compute(a.shape, lambda i: a[i] + 1.0, name="B")
    func = te.create_prim_func([a, b]).with_attr("global_symbol", "addone")
    name = "runtime.module.loadfile_so"
    own = pytvm.get_global_func(name)
    with Workspace.create() as first, Workspace.create() as second:
        try:  # as rpc.server._server_env leaves the process: loaders confined to `first`
            pytvm.register_func(name, confined_functions(first)[name], override=True)
            pytvm.build(func, target="llvm").export_library(Path(second.path) / "lib.so")
            funcs = confined_functions(second)
            assert funcs["tvm.rpc.server.load_module"]("lib.so").get_function("addone")
            assert funcs[name]("lib.so").get_function("addone")
        finally:
            pytvm.register_func(name, own, override=True)
