"""RPC, wire-compatible with Apache TVM 0.27: protocol, channels, endpoint, sessions, remote
devices, server, tracker and proxy.

Three subpackages, each importing only the ones before it: ``wire`` (what travels between two
peers: protocol, messages, channels, packet I/O), ``sessions`` (what a client holds and the hops
a request crosses: endpoint, session kinds, ``RPCSession``, remote devices, tracker client) and
``services`` (the processes that serve, match and relay sessions: server, tracker, proxy). The
public names below are imported from here.

TVM's module paths are kept as thin modules over the three subpackages: ``rpc.server``,
``rpc.tracker``, ``rpc.proxy``, ``rpc.client``, ``rpc.base``, ``rpc.testing``, ``rpc.minrpc``
(``with_minrpc``) and ``rpc._ffi_api``, each loaded on first use (``rpc.server`` is the module,
``rpc.Server`` the class, as in TVM).

Names, each with one meaning (TVM's public names kept as TVM spells them):

``RPCSession``
    What a client holds (TVM's name): functions, files, modules and devices of one session.
``rpc.LocalSession()``, ``rpc.PopenSession(binary)``, ``rpc.connect(...)``
    Functions (TVM's names) returning an ``RPCSession``: served in this process, by a child
    process over pipes, by a server over TCP.
``rpc.connect_serial(port, ...)``
    An ``RPCSession`` with a board's MinRPC server over its UART (a serial device, a socket or
    a ``socket://host:port`` URL), through serial framing and the session handshake.
``TrackerSession``
    A client's connection to a tracker (TVM's name), from ``connect_tracker``.
``SessionBase``
    The interface one hop implements in wire values (calls, syscalls, copies); also the
    device API of that hop's remote devices. Formerly ``Session``.
``LocalServingSession``
    A ``SessionBase`` that executes requests in this process (the last hop); a server's
    ``WorkspaceSession`` is one confined to a temporary workspace.
``ForwardingSession``
    A ``SessionBase`` that forwards requests over an ``Endpoint`` to the next hop. Formerly
    ``ClientSession``.
``SessionModule``
    The ``rpc`` module a session constructor returns; it carries a ``SessionBase``.
``Channel``
    A byte transport under an endpoint (socket, pipes, memory, serial, accelerator).
``Connection``, ``EventLoop``
    Internal to the server, tracker and proxy: one accepted socket with an output buffer,
    and the one ``selectors`` loop (with timers) every such service runs on.
``pytvm.rpc.wire.serial_link.SerialLink``
    The start/reset handshake over serial frames (the C runtime's serial session layer).
``pytvm.contrib.hexagon.open_accelerator_session``
    The Python function behind the global function ``pytvm.hexagon.create_session``.

Examples
--------
>>> from pytvm import rpc
>>> sess = rpc.LocalSession()
>>> sess.cpu().device_type >= 128
True
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from ..ffi.errors import RPCSessionBrokenError
from .sessions import device_api as _device_api  # noqa: F401 - registers device_api.rpc
from .sessions.client import (
    LocalSession,
    PopenSession,
    RemoteFunction,
    RemoteModule,
    RemoteObject,
    RPCSession,
    connect,
)
from .sessions.endpoint import Endpoint, serve
from .sessions.forwarding_session import ForwardingSession, connect_channel
from .sessions.session import SessionBase, SessionModule
from .wire.base import (
    RPC_MAGIC,
    RPC_SESS_MASK,
    RPC_TRACKER_MAGIC,
    ProtocolError,
    RPCError,
    RPCSessionTimeoutError,
    TrackerCode,
)
from .wire.channel import Channel, MemoryChannel, PipeChannel, SocketChannel, memory_pair

__all__ = [
    "RPC_MAGIC",
    "RPC_SESS_MASK",
    "RPC_TRACKER_MAGIC",
    "Channel",
    "Endpoint",
    "ForwardingSession",
    "LocalSession",
    "MemoryChannel",
    "PipeChannel",
    "PopenSession",
    "ProtocolError",
    "Proxy",
    "RPCError",
    "RPCSession",
    "RPCSessionBrokenError",
    "RPCSessionTimeoutError",
    "RemoteFunction",
    "RemoteModule",
    "RemoteObject",
    "Server",
    "SessionBase",
    "SessionModule",
    "SocketChannel",
    "Tracker",
    "TrackerCode",
    "TrackerSession",
    "connect",
    "connect_channel",
    "connect_serial",
    "connect_tracker",
    "memory_pair",
    "serve",
    "with_minrpc",
]

#: Names loaded on first use, and the module (relative to this package) defining each.
_LAZY_NAMES = {
    "Proxy": ".services.proxy",
    "Server": ".services.server",
    "Tracker": ".services.tracker",
    "TrackerSession": ".sessions.tracker_client",
    "connect_serial": ".sessions.serial_client",
    "connect_tracker": ".sessions.tracker_client",
    "with_minrpc": ".minrpc",
}
#: TVM's module paths (thin modules over ``wire``, ``sessions`` and ``services``), loaded on
#: first attribute access.
_TVM_MODULES = frozenset(
    {"_ffi_api", "base", "client", "minrpc", "proxy", "server", "testing", "tracker"}
)


#: Earlier spellings of names in ``__all__`` (still importable, not listed).
_FORMER_NAMES = {"Session": "SessionBase", "ClientSession": "ForwardingSession"}

if TYPE_CHECKING:  # the lazily loaded names, for type checkers
    from .minrpc import with_minrpc
    from .services.proxy import Proxy
    from .services.server import Server
    from .services.tracker import Tracker
    from .sessions.serial_client import connect_serial
    from .sessions.tracker_client import TrackerSession, connect_tracker


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__, *_TVM_MODULES})


def __getattr__(name: str) -> object:
    # Server, tracker and proxy pull in process and socket machinery; load them on first use.
    if name in _FORMER_NAMES:  # the earlier spellings of public names, for existing code
        return globals()[_FORMER_NAMES[name]]
    if name in _LAZY_NAMES:
        return getattr(importlib.import_module(_LAZY_NAMES[name], __name__), name)
    if name in _TVM_MODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'pytvm.rpc' has no attribute {name!r}")
