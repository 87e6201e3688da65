"""TVM's ``tvm.exec`` command modules: ``python -m pytvm.exec.rpc_server`` (also ``rpc_tracker``,
``rpc_proxy``, ``query_rpc_tracker``) take TVM's options and run ``pytvm rpc server|tracker|
proxy|query`` (:mod:`pytvm.cli.rpc`).
"""

from __future__ import annotations

__all__: list[str] = []
