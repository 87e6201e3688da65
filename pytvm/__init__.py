"""pytvm: Apache TVM's runtime and compiler stack in Python, with a small portable C runtime.

``ffi``, ``runtime``, ``nd`` and ``error`` load with the package; the other subpackages
(``rpc``, ``contrib``, ``crt``, ``support``, ``viz``, ``testing``, and the compiler's ``ir``,
``tir``, ``te``, ``topi``, ``transform``, ``script``) load on first attribute access, so
``pytvm.rpc.connect(...)`` works after a bare ``import pytvm`` and ``import pytvm`` stays light.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from . import error, ffi, nd, runtime
from .ffi import (
    DataType,
    DataTypeCode,
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
    register_global_func,
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
    from . import (
        autotvm,
        codegen,
        contrib,
        crt,
        driver,
        ir,
        rpc,
        script,
        support,
        target,
        te,
        tir,
        topi,
        transform,
        viz,
    )
    from .driver import build, compile, lower
    from .ir_module import IRModule
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


#: Subpackages loaded on first use by :func:`__getattr__`.
_LAZY_SUBPACKAGES = frozenset(
    {
        "_ffi",
        "arith",
        "autotvm",
        "codegen",
        "contrib",
        "crt",
        "driver",
        "frontend",
        "graph",
        "ir",
        "micro",
        "relay",
        "rpc",
        "script",
        "support",
        "target",
        "te",
        "testing",
        "tir",
        "topi",
        "transform",
        "viz",
    }
)
#: The compiler's entry functions (TVM's ``tvm.build``/``tvm.lower``/``tvm.compile``), loaded
#: from :mod:`pytvm.driver` on first use.
_LAZY_FUNCTIONS = frozenset({"build", "compile", "lower"})
#: Modules TVM names at the top that live in a subpackage here (``tvm.container``).
_LAZY_ALIASES = {"container": f"{__name__}.ir.container"}
#: Classes TVM names at the top, loaded from the facade module that defines them on first use.
_LAZY_CLASSES = {"IRModule": f"{__name__}.ir_module"}


def __getattr__(name: str) -> Any:
    if name in _LAZY_SUBPACKAGES:
        return importlib.import_module(f"{__name__}.{name}")
    if name in _LAZY_FUNCTIONS:
        return getattr(importlib.import_module(f"{__name__}.driver"), name)
    if name in _LAZY_ALIASES:
        return importlib.import_module(_LAZY_ALIASES[name])
    if name in _LAZY_CLASSES:
        return getattr(importlib.import_module(_LAZY_CLASSES[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(
        {*globals(), *_LAZY_SUBPACKAGES, *_LAZY_FUNCTIONS, *_LAZY_ALIASES, *_LAZY_CLASSES}
    )


__all__ = [
    "DataType",
    "DataTypeCode",
    "Device",
    "IRModule",
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
    "autotvm",
    "build",
    "codegen",
    "compile",
    "contrib",
    "cpu",
    "crt",
    "cuda",
    "device",
    "driver",
    "error",
    "ext_dev",
    "ffi",
    "get_global_func",
    "hexagon",
    "ir",
    "list_global_func_names",
    "lower",
    "micro",
    "nd",
    "register_func",
    "register_global_func",
    "register_object",
    "remove_global_func",
    "rpc",
    "runtime",
    "script",
    "support",
    "target",
    "te",
    "testing",
    "tir",
    "topi",
    "trace",
    "transform",
    "viz",
]
