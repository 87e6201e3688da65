"""RPC sessions: what a client holds, and the hops a request crosses.

The session interface (``session``), the endpoint that speaks it over a channel (``endpoint``,
with ``request_dispatch`` answering the peer's requests), the session kinds (forwarding to the
next hop, serving in this process, confined to a workspace), the client's ``RPCSession`` and its
remote devices (``client``, ``device_api``), hop-local trace control (``hop``), the functions a
served session offers (``workspace``, ``workspace_functions``, ``server_testing``) and the
client of a tracker (``tracker_client``). Imports only ``wire`` from the RPC package.
"""

from __future__ import annotations

__all__: list[str] = []  # the modules are the interface; pytvm.rpc re-exports the public names
