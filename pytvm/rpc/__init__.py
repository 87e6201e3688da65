"""RPC, wire-compatible with Apache TVM 0.27: protocol, channels, endpoint, sessions, remote
devices, server, tracker and proxy.

Examples
--------
>>> from pytvm import rpc
>>> sess = rpc.LocalSession()
>>> sess.cpu().device_type >= 128
True
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..ffi.errors import RPCSessionBrokenError
from . import device_api as _device_api  # noqa: F401 - registers device_api.rpc
from .base import (
    RPC_MAGIC,
    RPC_SESS_MASK,
    RPC_TRACKER_MAGIC,
    ProtocolError,
    RPCError,
    RPCSessionTimeoutError,
    TrackerCode,
)
from .channel import Channel, MemoryChannel, PipeChannel, SocketChannel, memory_pair
from .client import (
    LocalSession,
    PopenSession,
    RemoteFunction,
    RemoteModule,
    RemoteObject,
    RPCSession,
    connect,
)
from .client_session import ClientSession, connect_channel
from .endpoint import Endpoint, serve
from .session import Session, SessionModule

__all__ = [
    "RPC_MAGIC",
    "RPC_SESS_MASK",
    "RPC_TRACKER_MAGIC",
    "ProtocolError",
    "RPCError",
    "RPCSessionTimeoutError",
    "RPCSessionBrokenError",
    "TrackerCode",
    "Channel",
    "MemoryChannel",
    "PipeChannel",
    "SocketChannel",
    "memory_pair",
    "LocalSession",
    "PopenSession",
    "RemoteFunction",
    "RemoteModule",
    "RemoteObject",
    "RPCSession",
    "connect",
    "ClientSession",
    "connect_channel",
    "Endpoint",
    "serve",
    "Session",
    "SessionModule",
    "Server",
    "Tracker",
    "TrackerSession",
    "connect_tracker",
    "Proxy",
]


if TYPE_CHECKING:  # the lazily loaded names, for type checkers
    from .proxy import Proxy
    from .server import Server
    from .tracker import Tracker
    from .tracker_client import TrackerSession, connect_tracker


def __getattr__(name: str) -> object:
    # Server, tracker and proxy pull in process and socket machinery; load them on first use.
    if name == "Server":
        from .server import Server

        return Server
    if name == "Tracker":
        from .tracker import Tracker

        return Tracker
    if name in ("TrackerSession", "connect_tracker"):
        from . import tracker_client

        return getattr(tracker_client, name)
    if name == "Proxy":
        from .proxy import Proxy

        return Proxy
    raise AttributeError(f"module 'pytvm.rpc' has no attribute {name!r}")
