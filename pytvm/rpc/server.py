"""TVM's ``tvm.rpc.server`` path: the RPC server (:mod:`pytvm.rpc.services.server`).

``_server_env(load_library, work_path=None)`` keeps TVM's private name: it registers the
server's functions in this process, as TVM's tests call it.

Examples
--------
>>> from pytvm import rpc
>>> rpc.server.Server is rpc.Server
True
"""

from __future__ import annotations

from .services.server import Server, _server_env  # noqa: F401 - TVM's private name, kept

__all__ = ["Server"]
