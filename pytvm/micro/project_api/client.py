"""The client side of TVM v0.18's microTVM Project API: :class:`ProjectAPIClient` sends one
JSON-RPC 2.0 request per line and reads the reply; errors come back as the exceptions of
:mod:`.server` (``IoTimeoutError``, ``TransportClosedError``, ``ServerError``, ...).
:func:`instantiate_from_dir` starts a project's ``microtvm_api_server.py`` in a subprocess and
talks to it over two pipes.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .server import PROTOCOL_VERSION, JSONRPCError, LineStream

__all__ = [
    "ConnectionShutdownError",
    "ProjectAPIClient",
    "ProjectAPIErrorBase",
    "ProjectAPIServerNotFoundError",
    "RPCError",
    "UnsupportedProtocolVersionError",
    "instantiate_from_dir",
]

#: The file a template or generated project serves the Project API with.
SERVER_SCRIPT = "microtvm_api_server.py"


class ProjectAPIErrorBase(Exception):
    """An error of the client itself (not one the server reported)."""


class ConnectionShutdownError(ProjectAPIErrorBase):
    """The server closed its end before replying."""


class ProjectAPIServerNotFoundError(ProjectAPIErrorBase):
    """The project folder has no ``microtvm_api_server.py``."""


class RPCError(ProjectAPIErrorBase):
    """The reply did not fit the request (wrong id, neither result nor error)."""


class UnsupportedProtocolVersionError(ProjectAPIErrorBase):
    """The server speaks another protocol version than this client."""


class ProjectAPIClient:
    """Requests to a Project API server over ``read_file`` (its replies) and ``write_file``
    (our requests), byte streams. ``testonly_did_write_request`` is called after each request
    is written (a server in the same thread serves it then). ``timeout``: seconds a reply may
    take on a stream with a file descriptor (``TimeoutError`` after that; ``None``: no limit).
    """

    def __init__(
        self,
        read_file: Any,
        write_file: Any,
        testonly_did_write_request: Callable[[], None] | None = None,
        timeout: float | None = None,
    ) -> None:
        self.read_file, self.write_file = read_file, write_file
        self._stream = LineStream(read_file, write_file, timeout)
        self.testonly_did_write_request = testonly_did_write_request
        self.next_request_id = 1
        self.process: subprocess.Popen[bytes] | None = None

    def close(self) -> None:
        """Close both streams (the server then sees end of input), and wait for its process."""
        for stream in (self.write_file, self.read_file):
            close = getattr(stream, "close", None)
            if close is not None:
                try:
                    close()
                except OSError:
                    pass
        if self.process is not None:
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
            self.process = None

    def __enter__(self) -> ProjectAPIClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _request_reply(self, method: str, params: dict[str, Any]) -> Any:
        """Send one request and return its ``result``; raise the error it carries."""
        request_id = self.next_request_id
        self.next_request_id += 1
        request = {"jsonrpc": "2.0", "method": method, "params": params, "id": request_id}
        self._stream.write_line(json.dumps(request))
        if self.testonly_did_write_request is not None:
            self.testonly_did_write_request()
        line = self._stream.readline()
        if not line:
            raise ConnectionShutdownError(f"{method}: the server closed its end before replying")
        reply = json.loads(line)
        if not isinstance(reply, dict) or reply.get("id") not in (request_id, None):
            raise RPCError(f"{method}: reply {reply!r} is not for request {request_id}")
        if "error" in reply:
            raise JSONRPCError.from_json(f"method {method}", reply["error"])
        if "result" not in reply:
            raise RPCError(f"{method}: reply {reply!r} has neither result nor error")
        return reply["result"]

    def server_info_query(self, tvm_version: str) -> dict[str, Any]:
        """The server's platform, options and protocol version (checked against ours)."""
        reply: dict[str, Any] = self._request_reply(
            "server_info_query", {"tvm_version": tvm_version}
        )
        if reply.get("protocol_version") != PROTOCOL_VERSION:
            raise UnsupportedProtocolVersionError(
                f"microTVM API Server supports protocol version {reply.get('protocol_version')}; "
                f"want {PROTOCOL_VERSION}"
            )
        return reply

    def generate_project(
        self,
        model_library_format_path: str,
        standalone_crt_dir: str,
        project_dir: str,
        options: dict[str, Any] | None = None,
    ) -> Any:
        """Ask the server to write a project for a Model Library Format archive."""
        return self._request_reply(
            "generate_project",
            {
                "model_library_format_path": str(model_library_format_path),
                "standalone_crt_dir": str(standalone_crt_dir),
                "project_dir": str(project_dir),
                "options": options if options is not None else {},
            },
        )

    def build(self, options: dict[str, Any] | None = None) -> Any:
        """Build the project."""
        return self._request_reply("build", {"options": options if options is not None else {}})

    def flash(self, options: dict[str, Any] | None = None) -> Any:
        """Flash the device."""
        return self._request_reply("flash", {"options": options if options is not None else {}})

    def open_transport(self, options: dict[str, Any] | None = None) -> dict[str, Any]:
        """Open the device link; ``{"timeouts": {...}}``."""
        result: dict[str, Any] = self._request_reply(
            "open_transport", {"options": options if options is not None else {}}
        )
        return result

    def close_transport(self) -> Any:
        """Close the device link."""
        return self._request_reply("close_transport", {})

    def read_transport(self, n: int, timeout_sec: float | None) -> dict[str, bytes]:
        """``{"data": bytes}``: between 1 and ``n`` bytes from the device."""
        reply = self._request_reply("read_transport", {"n": n, "timeout_sec": timeout_sec})
        return {"data": base64.b85decode(reply["data"])}

    def write_transport(self, data: bytes, timeout_sec: float | None) -> None:
        """Write ``data`` to the device."""
        encoded = base64.b85encode(bytes(data)).decode("ascii")
        self._request_reply("write_transport", {"data": encoded, "timeout_sec": timeout_sec})


def instantiate_from_dir(
    project_dir: str | os.PathLike[str], debug: bool = False, timeout: float = 600.0
) -> ProjectAPIClient:
    """Start ``<project_dir>/microtvm_api_server.py`` (with this Python) and return a client
    connected to it over two pipes; ``close()`` ends it. A reply that takes longer than
    ``timeout`` seconds (a build included) raises ``TimeoutError``.
    """
    script = Path(project_dir) / SERVER_SCRIPT
    if not script.is_file():
        raise ProjectAPIServerNotFoundError(f"{project_dir}: no {SERVER_SCRIPT} in this folder")
    request_read, request_write = os.pipe()
    reply_read, reply_write = os.pipe()
    args = [sys.executable, str(script), "--read-fd", str(request_read),
            "--write-fd", str(reply_write)] + (["--debug"] if debug else [])  # fmt: skip
    try:
        process = subprocess.Popen(args, cwd=str(project_dir), pass_fds=(request_read, reply_write))
    finally:
        os.close(request_read)
        os.close(reply_write)
    client = ProjectAPIClient(
        os.fdopen(reply_read, "rb", buffering=0),
        os.fdopen(request_write, "wb", buffering=0),
        timeout=timeout,
    )
    client.process = process
    return client
