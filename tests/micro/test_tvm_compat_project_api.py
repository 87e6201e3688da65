"""TVM v0.18's microTVM Project API (``tvm.micro.project_api``): a project's
``microtvm_api_server.py`` in a subprocess, served over two pipes, and the JSON-RPC errors a
client sees (the handler's exceptions by class, malformed requests, unknown methods).
"""

from __future__ import annotations

import io
import json
import sys
import textwrap
from pathlib import Path

import pytest

from pytvm.micro.project_api import client, server

SERVER = textwrap.dedent(
    """
    import pathlib
    from pytvm.micro.project_api import server


    class Handler(server.ProjectAPIHandler):
        def __init__(self):
            self.pending = b""

        def server_info_query(self, tvm_version):
            return server.ServerInfo(
                platform_name="echo", is_template=False, model_library_format_path=None,
                project_options=server.default_project_options(board={"choices": ["echo1"]}),
            )

        def generate_project(self, model_library_format_path, standalone_crt_dir, project_dir,
                             options):
            raise NotImplementedError("a generated project")

        def build(self, options):
            pathlib.Path("built.txt").write_text(repr(sorted(options.items())))

        def flash(self, options):
            raise ValueError("no board attached")

        def open_transport(self, options):
            return server.TransportTimeouts(1.0, 2.0, 3.0)

        def close_transport(self):
            self.pending = b""

        def read_transport(self, n, timeout_sec):
            if not self.pending:
                raise server.IoTimeoutError()
            data, self.pending = self.pending[:n], self.pending[n:]
            return data

        def write_transport(self, data, timeout_sec):
            self.pending += data


    if __name__ == "__main__":
        server.main(Handler())
    """
)


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    (tmp_path / client.SERVER_SCRIPT).write_text(SERVER)
    return tmp_path


def test_a_project_server_in_a_subprocess(project: Path) -> None:
    with client.instantiate_from_dir(project) as api:
        info = api.server_info_query("0.18.0")
        assert info["platform_name"] == "echo" and info["protocol_version"] == 1
        board = next(o for o in info["project_options"] if o["name"] == "board")
        assert board["choices"] == ["echo1"] and board["required"] == ["generate_project"]
        api.build({"verbose": True})
        assert (project / "built.txt").read_text() == "[('verbose', True)]"
        assert api.open_transport({}) == {
            "timeouts": {
                "session_start_retry_timeout_sec": 1.0,
                "session_start_timeout_sec": 2.0,
                "session_established_timeout_sec": 3.0,
            }
        }
        payload = bytes(range(256)) * 3
        api.write_transport(payload, 1.0)
        assert api.read_transport(500, 1.0)["data"] == payload[:500]
        assert api.read_transport(500, 1.0)["data"] == payload[500:]
        with pytest.raises(server.IoTimeoutError):
            api.read_transport(1, 0.0)
        with pytest.raises(server.ServerError, match="ValueError: no board attached"):
            api.flash({})
        with pytest.raises(server.JSONRPCError) as err:
            api._request_reply("reboot", {})
        assert err.value.code == server.ErrorCode.METHOD_NOT_FOUND
        with pytest.raises(server.JSONRPCError, match="parameter n: want <class 'int'>"):
            api._request_reply("read_transport", {"n": "4", "timeout_sec": None})
        process = api.process
    assert process is not None and process.returncode == 0  # closing the pipes ended it


def test_a_folder_without_a_server_is_named(tmp_path: Path) -> None:
    with pytest.raises(client.ProjectAPIServerNotFoundError, match=r"microtvm_api_server\.py"):
        client.instantiate_from_dir(tmp_path)


def test_malformed_requests_get_invalid_request_replies() -> None:
    requests = io.BytesIO(b'[1, 2]\n{"jsonrpc": "2.0", "method": "a b"}\nnot json\n')
    replies = io.BytesIO()
    srv = server.ProjectAPIServer(requests, replies, handler=None)  # type: ignore[arg-type]
    assert [srv.serve_one_request() for _ in range(4)] == [False, False, False, False]
    lines = [json.loads(line) for line in replies.getvalue().decode().splitlines()]
    assert [r["error"]["code"] for r in lines] == [server.ErrorCode.INVALID_REQUEST] * 2
    assert lines[0]["error"]["message"] == "request: want dict; got [1, 2]"


def test_default_project_options_reject_unknown_names() -> None:
    with pytest.raises(ValueError, match="no_such_option"):
        server.default_project_options(no_such_option={"required": []})
    assert sys.modules["pytvm.micro.project_api.server"] is server
