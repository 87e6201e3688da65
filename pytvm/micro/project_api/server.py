"""The server side of TVM v0.18's microTVM Project API: a :class:`ProjectAPIHandler` answers
``server_info_query``, ``generate_project``, ``build``, ``flash`` and the transport calls;
:class:`ProjectAPIServer` reads JSON-RPC 2.0 requests, one per line, checks them and their
parameters, calls the handler and writes the reply.

Errors travel as JSON-RPC errors: a malformed request gets ``INVALID_REQUEST``, an unknown
method ``METHOD_NOT_FOUND``, missing, extra or mistyped parameters ``INVALID_PARAMS``, and an
exception raised by the handler ``SERVER_ERROR`` naming its class; the client raises the
:class:`ServerError` subclass of that name (:class:`IoTimeoutError`,
:class:`TransportClosedError`, :class:`UnsupportedTVMVersionError`) or :class:`ServerError`.
Transport bytes are base85 text. This module imports only the standard library, so a template
project's ``microtvm_api_server.py`` may carry a copy and call :func:`main`.
"""

from __future__ import annotations

import abc
import argparse
import base64
import enum
import inspect
import json
import logging
import os
import pathlib
import re
import select
import traceback
import typing
from typing import Any, NamedTuple

__all__ = [
    "ErrorCode",
    "IoTimeoutError",
    "JSONRPCError",
    "ProjectAPIHandler",
    "ProjectAPIServer",
    "ProjectOption",
    "ServerError",
    "ServerInfo",
    "TransportClosedError",
    "TransportTimeouts",
    "UnsupportedTVMVersionError",
    "default_project_options",
    "main",
]

_LOG = logging.getLogger(__name__)

#: The protocol version this server speaks (TVM v0.18's).
PROTOCOL_VERSION = 1

_METHOD_NAME = re.compile(r"^[a-zA-Z0-9_]+$")


class ProjectOption(NamedTuple):
    """An option of a project: its ``type`` (``"bool"``, ``"str"``, ``"int"``), the methods that
    require it and those that accept it, its ``choices``, ``default`` and ``help``.
    """

    name: str
    choices: list[Any] | None = None
    default: Any = None
    type: str | None = None
    required: list[str] | None = None
    optional: list[str] | None = None
    help: str | None = None

    def replace(self, attributes: dict[str, Any]) -> ProjectOption:
        """A copy of the option with ``attributes`` changed."""
        return self._replace(**attributes)


class ServerInfo(NamedTuple):
    """What ``server_info_query`` answers."""

    platform_name: str
    is_template: bool
    model_library_format_path: str | None
    project_options: list[ProjectOption]


class TransportTimeouts(NamedTuple):
    """The timeouts of a transport, in seconds (``open_transport`` answers them; TVM's
    ``tvm.micro.transport.TransportTimeouts`` is this class).
    """

    session_start_retry_timeout_sec: float = 2.0
    session_start_timeout_sec: float = 30.0
    session_established_timeout_sec: float = 60.0


class ErrorCode(enum.IntEnum):
    """JSON-RPC 2.0 error codes, and ``SERVER_ERROR`` for an exception of the handler."""

    SERVER_ERROR = -32000
    PARSE_ERROR = -32700
    INVALID_REQUEST = -32600
    METHOD_NOT_FOUND = -32601
    INVALID_PARAMS = -32602
    INTERNAL_ERROR = -32603


class JSONRPCError(Exception):
    """A JSON-RPC error: ``code`` (an :class:`ErrorCode`), ``message`` and ``data``."""

    def __init__(self, code: int, message: str, data: Any = None, client_context: str = "") -> None:
        super().__init__(code, message, data)
        self.code, self.message, self.data = code, message, data
        self.client_context = client_context

    def __str__(self) -> str:
        where = f"calling {self.client_context}: " if self.client_context else ""
        try:
            name = ErrorCode(self.code).name
        except ValueError:
            name = str(self.code)
        text = f"{where}JSON-RPC error {name}: {self.message}"
        if isinstance(self.data, dict) and self.data.get("traceback"):
            text += "\nserver traceback:\n" + str(self.data["traceback"])
        return text

    def to_json(self) -> dict[str, Any]:
        """The ``error`` member of a reply."""
        return {"code": int(self.code), "message": self.message, "data": self.data}

    @classmethod
    def from_json(cls, client_context: str, error: dict[str, Any]) -> JSONRPCError:
        """The exception a client raises for the ``error`` member of a reply."""
        code, message, data = error.get("code"), str(error.get("message")), error.get("data")
        if code == ErrorCode.SERVER_ERROR:
            name = data.get("type") if isinstance(data, dict) else None
            kind = _SERVER_ERRORS.get(str(name), ServerError)
            return kind(message, data, client_context=client_context)
        return JSONRPCError(int(code or 0), message, data, client_context=client_context)


class ServerError(JSONRPCError):
    """The handler raised while serving a request (its class name is in the message)."""

    def __init__(self, message: str = "", data: Any = None, client_context: str = "") -> None:
        super().__init__(ErrorCode.SERVER_ERROR, message, data, client_context)

    @classmethod
    def from_exception(cls, exc: BaseException) -> ServerError:
        """The error reply for ``exc``: its class name, text and traceback."""
        trace = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        name = type(exc).__name__
        detail = exc.message if isinstance(exc, JSONRPCError) else str(exc)
        text = f"{name}: {detail}" if detail else name
        return cls(text, {"type": name, "traceback": trace})


class UnsupportedTVMVersionError(ServerError):
    """The server does not support the client's TVM version."""


class IoTimeoutError(ServerError):
    """A transport read or write did not complete within its timeout."""


class TransportClosedError(ServerError):
    """The transport was closed."""


_SERVER_ERRORS: dict[str, type[ServerError]] = {
    c.__name__: c for c in (UnsupportedTVMVersionError, IoTimeoutError, TransportClosedError)
}


class ProjectAPIHandler(abc.ABC):
    """What a platform implements; the server calls it for each request."""

    @abc.abstractmethod
    def server_info_query(self, tvm_version: str) -> ServerInfo:
        """The platform's name, whether this is a template, and its options."""

    @abc.abstractmethod
    def generate_project(
        self,
        model_library_format_path: pathlib.Path,
        standalone_crt_dir: pathlib.Path,
        project_dir: pathlib.Path,
        options: dict,  # type: ignore[type-arg]
    ) -> None:
        """Write a project for the model at ``model_library_format_path`` into ``project_dir``."""

    @abc.abstractmethod
    def build(self, options: dict) -> None:  # type: ignore[type-arg]
        """Build the project."""

    @abc.abstractmethod
    def flash(self, options: dict) -> None:  # type: ignore[type-arg]
        """Put the built firmware on the device."""

    @abc.abstractmethod
    def open_transport(self, options: dict) -> TransportTimeouts:  # type: ignore[type-arg]
        """Open the link to the device; the timeouts a session should use."""

    @abc.abstractmethod
    def close_transport(self) -> None:
        """Close the link to the device."""

    @abc.abstractmethod
    def read_transport(self, n: int, timeout_sec: float | None) -> bytes:
        """Between 1 and ``n`` bytes from the device (:class:`IoTimeoutError`,
        :class:`TransportClosedError`).
        """

    @abc.abstractmethod
    def write_transport(self, data: bytes, timeout_sec: float | None) -> None:
        """Write all of ``data`` to the device."""


def _check_type(context: str, name: str, value: Any, hint: Any) -> None:
    """Raise INVALID_PARAMS unless ``value`` fits the annotation ``hint`` (plain types and
    optionals; other annotations are not checked).
    """
    allowed = (
        typing.get_args(hint) if typing.get_origin(hint) in (typing.Union, _UnionType) else (hint,)
    )
    kinds = [typing.get_origin(a) or a for a in allowed]
    kinds = [type(None) if a is None else a for a in kinds]
    if not all(isinstance(k, type) for k in kinds):
        return
    if float in kinds and isinstance(value, int) and not isinstance(value, bool):
        return
    if not isinstance(value, tuple(kinds)):
        want = kinds[0] if len(kinds) == 1 else tuple(kinds)
        raise JSONRPCError(
            ErrorCode.INVALID_PARAMS,
            f"{context}: parameter {name}: want {want}, got {type(value)}",
        )


_UnionType = type(int | None)


def _check_params(context: str, func: Any, params: dict[str, Any]) -> None:
    """Raise INVALID_PARAMS for a parameter ``func`` lacks, one it needs that is missing, or a
    value of the wrong type.
    """
    signature = inspect.signature(func)
    names = [n for n in signature.parameters if n != "self"]
    extra = sorted(set(params) - set(names))
    if extra:
        raise JSONRPCError(
            ErrorCode.INVALID_PARAMS, f"{context}: extra parameters: {', '.join(extra)}"
        )
    hints = typing.get_type_hints(func)
    for name in names:
        if name not in params:
            raise JSONRPCError(ErrorCode.INVALID_PARAMS, f"{context}: parameter {name} not given")
        if name in hints:
            _check_type(context, name, params[name], hints[name])


class LineStream:
    """Lines of text over a byte stream: ``readline`` (``""`` at end of input) and
    ``write_line``. The stream needs only ``read(size)`` (at least one byte, ``b""`` at end)
    and ``write(data)``; ``flush`` is called where it has one.
    """

    def __init__(
        self, read_file: Any = None, write_file: Any = None, timeout: float | None = None
    ) -> None:
        self._read_file, self._write_file = read_file, write_file
        self._pending = bytearray()
        self.timeout = timeout

    def _wait(self) -> None:
        fileno = getattr(self._read_file, "fileno", None)
        if self.timeout is None or fileno is None:
            return
        if not select.select([fileno()], [], [], self.timeout)[0]:
            raise TimeoutError(f"project API: no reply within {self.timeout:g} s")

    def readline(self) -> str:
        """The next line with its newline, the rest at end of input, or ``""``; with a
        ``timeout`` (streams with a file descriptor), ``TimeoutError`` when no byte comes.
        """
        while b"\n" not in self._pending:
            self._wait()
            read = getattr(self._read_file, "read1", None) or self._read_file.read
            chunk = read(1 << 16)
            if not chunk:
                break
            self._pending += chunk
        end = self._pending.find(b"\n") + 1 or len(self._pending)
        line = bytes(self._pending[:end])
        del self._pending[:end]
        return line.decode("utf-8")

    def write_line(self, text: str) -> None:
        """Write ``text`` and a newline, then flush."""
        data = memoryview((text + "\n").encode("utf-8"))
        while data:  # a raw stream may take part of it; None means it took all
            written = self._write_file.write(data)
            data = data[len(data) if written is None else written :]
        flush = getattr(self._write_file, "flush", None)
        if flush is not None:
            flush()


class ProjectAPIServer:
    """Serves ``handler`` over a pair of byte streams (``read_file``, ``write_file``): one
    JSON request per line in, one JSON reply per line out.
    """

    def __init__(self, read_file: Any, write_file: Any, handler: ProjectAPIHandler) -> None:
        self._stream = LineStream(read_file, write_file)
        self._handler = handler

    def serve_forever(self) -> None:
        """Serve until the client closes its end."""
        while self.serve_one_request():
            pass

    def serve_one_request(self) -> bool:
        """Serve one request. False at end of input, for a line that is not JSON (no reply)
        and for a malformed request (an error reply); True once a request was dispatched, its
        reply a result or an error.
        """
        line = self._stream.readline()
        if not line:
            return False
        try:
            request = json.loads(line)
        except ValueError:
            _LOG.error("project API server: request is not JSON: %r", line[:200])
            return False
        try:
            self._validate(request)
        except JSONRPCError as err:
            self._reply({"jsonrpc": "2.0", "id": None, "error": err.to_json()})
            return False
        request_id = request.get("id")
        try:
            result = self._dispatch(request["method"], request.get("params", {}))
        except JSONRPCError as err:
            if isinstance(err, ServerError):  # raised by the handler: name its class
                err = ServerError.from_exception(err)
            self._reply({"jsonrpc": "2.0", "id": request_id, "error": err.to_json()})
        except Exception as exc:  # the handler's own error, named in the reply
            error = ServerError.from_exception(exc).to_json()
            self._reply({"jsonrpc": "2.0", "id": request_id, "error": error})
        else:
            self._reply({"jsonrpc": "2.0", "id": request_id, "result": result})
        return True

    @staticmethod
    def _validate(request: Any) -> None:
        def invalid(text: str) -> JSONRPCError:
            return JSONRPCError(ErrorCode.INVALID_REQUEST, text)

        if not isinstance(request, dict):
            raise invalid(f"request: want dict; got {request!r}")
        if request.get("jsonrpc") != "2.0":
            raise invalid(f'request["jsonrpc"]: want "2.0"; got {request.get("jsonrpc")!r}')
        method = request.get("method")
        if not isinstance(method, str):
            raise invalid(f'request["method"]: want str; got {method!r}')
        if not _METHOD_NAME.match(method):
            raise invalid(
                f'request["method"]: should match regex {_METHOD_NAME.pattern}; got {method!r}'
            )
        if "params" in request and not isinstance(request["params"], dict):
            raise invalid(f'request["params"]: want dict; got {type(request["params"])}')
        request_id = request.get("id")
        if request_id is not None and not isinstance(request_id, (str, int, float)):
            raise invalid(f'request["id"]: want str, number, null; got {request_id!r}')

    def _dispatch(self, method: str, params: dict[str, Any]) -> Any:
        own = getattr(self, f"_dispatch_{method}", None)
        if own is not None:
            _check_params(method, own, params)
            return own(**params)
        base = getattr(ProjectAPIHandler, method, None)
        if base is None or method.startswith("_"):
            raise JSONRPCError(ErrorCode.METHOD_NOT_FOUND, f"{method}: no such method")
        _check_params(method, base, params)
        return getattr(self._handler, method)(**params)

    def _reply(self, reply: dict[str, Any]) -> None:
        self._stream.write_line(json.dumps(reply))

    # Methods whose parameters or results are converted on the way.

    def _dispatch_server_info_query(self, tvm_version: str) -> dict[str, Any]:
        info = self._handler.server_info_query(tvm_version)
        reply = dict(info._asdict())
        reply.setdefault("protocol_version", PROTOCOL_VERSION)
        reply["project_options"] = [dict(o._asdict()) for o in reply["project_options"]]
        return reply

    def _dispatch_generate_project(
        self,
        model_library_format_path: str,
        standalone_crt_dir: str,
        project_dir: str,
        options: dict,  # type: ignore[type-arg]
    ) -> None:
        self._handler.generate_project(
            pathlib.Path(model_library_format_path),
            pathlib.Path(standalone_crt_dir),
            pathlib.Path(project_dir),
            options,
        )

    def _dispatch_open_transport(self, options: dict) -> dict[str, Any]:  # type: ignore[type-arg]
        timeouts = self._handler.open_transport(options)
        return {"timeouts": dict(timeouts._asdict()) if timeouts is not None else None}

    def _dispatch_read_transport(self, n: int, timeout_sec: float | None) -> dict[str, str]:
        data = self._handler.read_transport(n, timeout_sec)
        return {"data": base64.b85encode(bytes(data)).decode("ascii")}

    def _dispatch_write_transport(self, data: str, timeout_sec: float | None) -> None:
        self._handler.write_transport(base64.b85decode(data), timeout_sec)


_DEFAULT_OPTIONS = (
    ProjectOption("verbose", optional=["generate_project", "build"], type="bool",
                  help="Run the build with verbose output."),
    ProjectOption("project_type", required=["generate_project"], type="str",
                  help="Type of project to generate."),
    ProjectOption("board", required=["generate_project"], type="str",
                  help="Name of the board to build for."),
    ProjectOption("cmsis_path", optional=["generate_project"], type="str",
                  help="Path to the CMSIS directory."),
    ProjectOption("warning_as_error", optional=["generate_project"], type="bool",
                  help="Treat warnings as errors."),
    ProjectOption("compile_definitions", optional=["generate_project"], type="str",
                  help="Extra preprocessor definitions for the build."),
    ProjectOption("extra_files_tar", optional=["generate_project"], type="str",
                  help="A tar of files to add to the generated project."),
    ProjectOption("config_main_stack_size", optional=["generate_project"], type="int",
                  help="Stack size of the main thread, in bytes."),
)  # fmt: skip


def default_project_options(**changes: dict[str, Any]) -> list[ProjectOption]:
    """The options most platforms share; ``name={attribute: value}`` changes one of them
    (``verbose={"optional": ["flash"]}``).
    """
    unknown = sorted(set(changes) - {o.name for o in _DEFAULT_OPTIONS})
    if unknown:
        raise ValueError(f"default_project_options: no default options named {unknown}")
    return [o.replace(changes[o.name]) if o.name in changes else o for o in _DEFAULT_OPTIONS]


def main(handler: ProjectAPIHandler, argv: list[str] | None = None) -> None:
    """Serve ``handler`` on the file descriptors given as ``--read-fd`` and ``--write-fd``
    (how a client starts a project's ``microtvm_api_server.py``) until the client closes.
    """
    parser = argparse.ArgumentParser(description="microTVM Project API server")
    parser.add_argument("--read-fd", type=int, required=True, help="requests come in here")
    parser.add_argument("--write-fd", type=int, required=True, help="replies go out here")
    parser.add_argument("--debug", action="store_true", help="log at DEBUG level")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.debug else logging.INFO)
    with (
        os.fdopen(args.read_fd, "rb", buffering=0) as rfile,
        os.fdopen(args.write_fd, "wb", buffering=0) as wfile,
    ):
        ProjectAPIServer(rfile, wfile, handler).serve_forever()
