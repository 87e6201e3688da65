"""The AOT executor (TVM's ``Executor("aot")``, C interface, unpacked kernels): a model as C
that calls its kernels in order with pointers into one static workspace.
"""

from __future__ import annotations

from .build import build_aot
from .factory import AOTExecutorFactoryModule, KernelInfo, PlannedBuffer, TensorInfo

__all__ = ["AOTExecutorFactoryModule", "KernelInfo", "PlannedBuffer", "TensorInfo", "build_aot"]
