"""TVM's ``tvm.rpc.tracker`` path: the RPC tracker (:mod:`pytvm.rpc.services.tracker`).

The protocol is documented where it is implemented, in :mod:`pytvm.rpc.services.tracker`.
``MAX_TRACKER_MSG_BYTES`` is the largest tracker message the tracker accepts (the wire's
``MAX_JSON_BYTES``, 1 MiB as in TVM).

Examples
--------
>>> from pytvm.rpc.tracker import Tracker
>>> Tracker.__module__
'pytvm.rpc.services.tracker'
"""

from __future__ import annotations

from .services.tracker import Tracker
from .wire.base import MAX_JSON_BYTES as MAX_TRACKER_MSG_BYTES
from .wire.base import RPC_TRACKER_MAGIC

__all__ = ["MAX_TRACKER_MSG_BYTES", "RPC_TRACKER_MAGIC", "Tracker"]
