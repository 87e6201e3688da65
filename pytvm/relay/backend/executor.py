"""TVM's ``relay.backend.Executor``: the graph or AOT executor and their options."""

from __future__ import annotations

from ._config import Config, OptionTable

__all__ = ["Executor"]

_EXECUTORS: OptionTable = {
    "aot": {
        "link-params": (bool, True),
        "unpacked-api": (bool, None),
        "interface-api": (str, None),
        "workspace-byte-alignment": (int, None),
        "constant-byte-alignment": (int, None),
    },
    "graph": {"link-params": (bool, False)},
}


class Executor(Config):
    """TVM's ``relay.backend.Executor``: ``Executor("aot", {"interface-api": "c",
    "unpacked-api": True})``.

    Examples
    --------
    >>> Executor("aot", {"unpacked-api": True})["link-params"]
    True
    """

    flag_registry_name = "executor"
    _table = _EXECUTORS
