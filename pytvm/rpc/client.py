"""TVM's ``tvm.rpc.client`` path: what a client holds (:mod:`pytvm.rpc.sessions.client`) and
the tracker client (:mod:`pytvm.rpc.sessions.tracker_client`).

Examples
--------
>>> from pytvm.rpc import client
>>> client.LocalSession().cpu().device_type >= 128
True
"""

from __future__ import annotations

from .sessions.client import LocalSession, PopenSession, RPCSession, connect
from .sessions.tracker_client import TrackerSession, connect_tracker

__all__ = [
    "LocalSession",
    "PopenSession",
    "RPCSession",
    "TrackerSession",
    "connect",
    "connect_tracker",
]
