"""TVM's ``tvm.rpc.proxy`` path: the RPC proxy (:mod:`pytvm.rpc.services.proxy`).

pytvm's proxy relays TCP sessions; TVM's HTTP and WebSocket front end (browser servers,
``websocket_proxy_server``) has no counterpart here.

Examples
--------
>>> from pytvm.rpc.proxy import Proxy
>>> Proxy.__module__
'pytvm.rpc.services.proxy'
"""

from __future__ import annotations

from .services.proxy import Proxy

__all__ = ["Proxy"]
