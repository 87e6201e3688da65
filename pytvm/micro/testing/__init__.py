"""TVM v0.18's ``tvm.micro.testing``: the AOT test runners and option grids of microTVM's tests,
and small models they build (:mod:`.aot_test_utils`, :mod:`.utils`).
"""

from .aot_test_utils import AOT_CORSTONE300_RUNNER, AOT_DEFAULT_RUNNER, parametrize_aot_options
from .utils import get_conv2d_relay_module

__all__ = [
    "AOT_CORSTONE300_RUNNER",
    "AOT_DEFAULT_RUNNER",
    "get_conv2d_relay_module",
    "parametrize_aot_options",
]
