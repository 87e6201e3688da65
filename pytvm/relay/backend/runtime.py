"""TVM's ``relay.backend.Runtime``: the C++ or C runtime a build links against."""

from __future__ import annotations

from ._config import Config, OptionTable

__all__ = ["Runtime"]

_RUNTIMES: OptionTable = {"cpp": {"system-lib": (bool, None)}, "crt": {"system-lib": (bool, None)}}


class Runtime(Config):
    """TVM's ``relay.backend.Runtime``: ``Runtime("crt", {"system-lib": True})``.

    Examples
    --------
    >>> Runtime("crt", {"system-lib": True})["system-lib"]
    True
    """

    flag_registry_name = "runtime"
    _table = _RUNTIMES
