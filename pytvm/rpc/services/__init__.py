"""RPC services: the long-running processes that serve, match and relay sessions.

The server (``server``) with its worker processes (``_worker_pool``, ``server_env``), its
links to a tracker or proxy (``_server_links``), its handshake intake (``_handshake``) and
idle-limited connections (``_idle_channel``); the tracker (``tracker``, ``_tracker_scheduler``);
the proxy (``proxy``); the event loop they all run on (``_event_loop``, ``_selector_server``);
and a server over a pipe pair (``pipe_server``). Built on ``wire`` and ``sessions``.
"""

from __future__ import annotations

__all__: list[str] = []  # the modules are the interface; pytvm.rpc re-exports the public names
