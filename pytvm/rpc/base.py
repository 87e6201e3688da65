"""TVM's ``tvm.rpc.base`` path: the wire's constants and socket helpers
(:mod:`pytvm.rpc.wire.base`).

``random_key(prefix, exclude=None)`` and ``split_random_key(key)`` take pytvm's parameters
(no ``delimiter``/``cmap``); TVM's ``get_addr_family`` and ``logger`` have no counterpart.

Examples
--------
>>> from pytvm.rpc.base import RPC_MAGIC, TrackerCode
>>> hex(RPC_MAGIC), int(TrackerCode.REQUEST)
('0xff271', 4)
"""

from __future__ import annotations

from .wire.base import (
    RPC_CODE_DUPLICATE,
    RPC_CODE_MISMATCH,
    RPC_CODE_SUCCESS,
    RPC_MAGIC,
    RPC_SESS_MASK,
    RPC_TRACKER_MAGIC,
    TrackerCode,
    connect_with_retry,
    random_key,
    recvall,
    recvjson,
    sendjson,
    split_random_key,
)

__all__ = [
    "RPC_CODE_DUPLICATE",
    "RPC_CODE_MISMATCH",
    "RPC_CODE_SUCCESS",
    "RPC_MAGIC",
    "RPC_SESS_MASK",
    "RPC_TRACKER_MAGIC",
    "TrackerCode",
    "connect_with_retry",
    "random_key",
    "recvall",
    "recvjson",
    "sendjson",
    "split_random_key",
]
