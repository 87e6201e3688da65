"""pytvm: Apache TVM's runtime and compiler stack in Python, with a small portable C runtime."""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import ffi, nd, runtime
from .ffi import (
    DataType,
    Device,
    Object,
    PackedFunc,
    TVMError,
    cpu,
    cuda,
    device,
    ext_dev,
    get_global_func,
    hexagon,
    list_global_func_names,
    register_func,
    register_object,
    remove_global_func,
)
from .ffi.errors import (
    TVMAttributeError,
    TVMIndexError,
    TVMKeyError,
    TVMMemoryError,
    TVMTypeError,
    TVMValueError,
)
from .runtime import NDArray

if TYPE_CHECKING:
    from .viz.trace import Trace

__version__ = "0.1.0"


def trace() -> Trace:
    """Record every layer and hop a call crosses: ``with pytvm.trace() as t: ...``.

    Returns a :class:`pytvm.viz.trace.Trace`; after the block ``t.events`` holds the events of
    this process and of every hop behind the live RPC sessions, and ``t.text()``,
    ``t.mermaid()``, ``t.chrome_json()`` and ``t.save_chrome(path)`` render them.

    Examples
    --------
    >>> import numpy as np, pytvm
    >>> a = pytvm.nd.empty((2,), "int32")
    >>> with pytvm.trace() as t:
    ...     _ = a.copyfrom(np.array([2, 3], "int32"))
    >>> sorted({e.layer for e in t.events})
    ['DeviceAPI.get', 'Python API']
    """
    from .viz.trace import Trace

    return Trace()


__all__ = [
    "DataType",
    "Device",
    "NDArray",
    "Object",
    "PackedFunc",
    "TVMAttributeError",
    "TVMError",
    "TVMIndexError",
    "TVMKeyError",
    "TVMMemoryError",
    "TVMTypeError",
    "TVMValueError",
    "__version__",
    "cpu",
    "cuda",
    "device",
    "ext_dev",
    "ffi",
    "get_global_func",
    "hexagon",
    "list_global_func_names",
    "nd",
    "register_func",
    "register_object",
    "remove_global_func",
    "runtime",
    "trace",
]
