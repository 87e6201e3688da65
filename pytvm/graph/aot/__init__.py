"""The AOT executor (TVM's ``Executor("aot")``, unpacked kernels): a model as C that calls its
kernels in order with pointers into one static workspace. ``interface-api`` ``c`` gives TVM's
struct interface (``tvmgen_<mod>_run``); ``packed`` (TVM's default) adds the packed entry point
``tvmgen_<mod>___tvm_main__`` for the C runtime; ``link-params: False`` is refused (the
weights are const arrays).
"""

from __future__ import annotations

from .build import build_aot
from .factory import AOTExecutorFactoryModule, KernelInfo, PlannedBuffer, TensorInfo

__all__ = ["AOTExecutorFactoryModule", "KernelInfo", "PlannedBuffer", "TensorInfo", "build_aot"]
