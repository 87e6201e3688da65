"""TVM v0.18's microTVM Project API (``tvm.micro.project_api``): the JSON-RPC 2.0 protocol
between a client and a platform's project server (``microtvm_api_server.py``), one request
per line over a pair of pipes.

:mod:`.server` needs only the standard library, so a template project can carry a copy;
:mod:`.client` talks to a server in this process or starts one in a subprocess.
"""

from . import client, server

__all__ = ["client", "server"]
