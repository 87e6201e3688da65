"""TVM's ``relay.testing``: model workloads with initialized parameters (``resnet``) and the
helpers that build them (``create_workload``, ``init``, ``layers``).

Examples
--------
>>> from pytvm import relay
>>> mod, params = relay.testing.resnet.get_workload(num_layers=18, image_shape=(3, 32, 32))
>>> mod["main"].params[0].name, len(params) > 0
('data', True)
"""

from __future__ import annotations

from . import init, layers, resnet
from .workload import create_workload, function_of

__all__ = ["create_workload", "function_of", "init", "layers", "resnet"]
