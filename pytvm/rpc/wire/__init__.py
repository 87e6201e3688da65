"""The RPC wire: what travels between two peers, and nothing that holds a session.

Pure encode/decode of packed-sequence values (``values``), of packets (``protocol``, which
re-exports ``values``) and of whole messages (``messages``), the constants and key format of the
handshakes (``base``), the tracker's JSON messages (``_tracker_wire``), shared-token proofs
(``_auth``), byte transports (``channel``) and the buffered packet reads and traced sends an
endpoint is built on (``_packet_io``); ``_c_codec`` builds and switches on the C codec
(``src/rpc_codec``) that encodes and decodes the common values with the same bytes and errors.
Imports nothing from ``sessions`` or ``services``.
"""

from __future__ import annotations

__all__: list[str] = []  # the modules are the interface; pytvm.rpc re-exports the public names
