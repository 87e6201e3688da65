"""The ``@script`` decorator: a hybrid function parses to a ``HybridOp`` when called with
tensor-expression values and runs as Python (the emulator) when called with numpy arrays.
"""

from __future__ import annotations

import functools
import inspect
import textwrap
from collections.abc import Callable, Sequence
from numbers import Number
from typing import Any, TypeVar

import numpy as np

from ...ffi.errors import TVMTypeError
from ...tir.expr import IterVar, PrimExpr
from ..tensor import Tensor
from .parser import source_to_op
from .runtime import enter_hybrid_runtime, restore_runtime

__all__ = ["is_tvm_args", "pruned_source", "script"]

F = TypeVar("F", bound=Callable[..., Any])

_TVM_TYPES = (Tensor, PrimExpr, IterVar, Number, tuple, list, str)
_NUMPY_TYPES = (np.ndarray, Number, np.generic)


def is_tvm_args(args: Sequence[Any]) -> bool:
    """True when every argument is a tensor-expression value (parse), False when every one is
    a numpy value (emulate); a mix raises.
    """
    if all(isinstance(a, _TVM_TYPES) for a in args):
        return True
    if all(isinstance(a, _NUMPY_TYPES) for a in args):
        return False
    raise TVMTypeError(
        "hybrid script: the arguments must be all tensor-expression values (tensors, vars, "
        f"constants, lists) or all numpy values; got {[type(a).__name__ for a in args]}"
    )


def pruned_source(func: Callable[..., Any]) -> str:
    """The source of ``func`` without the indentation of its enclosing block."""
    try:
        return textwrap.dedent(inspect.getsource(func))
    except (OSError, TypeError) as err:
        raise TVMTypeError(
            f"hybrid script: cannot read the source of {func!r} ({err}); define it in a file"
        ) from err


def script(pyfunc: F) -> F:
    """Decorate a Python function as a hybrid script (TVM's ``te.hybrid.script``).

    Examples
    --------
    >>> import numpy as np
    >>> from pytvm import te
    >>> @te.hybrid.script
    ... def double(a):
    ...     b = output_tensor(a.shape, a.dtype)
    ...     for i in range(a.shape[0]):
    ...         b[i] = a[i] * 2.0
    ...     return b
    >>> double(np.ones(3, "float32")).tolist()
    [2.0, 2.0, 2.0]
    >>> A = te.placeholder((3,), name="A")
    >>> type(double(A).op).__name__
    'HybridOp'
    """

    @functools.wraps(pyfunc)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if not kwargs and is_tvm_args(args):
            captured = inspect.getclosurevars(pyfunc)
            closure = {**captured.nonlocals, **captured.globals}
            return source_to_op(pruned_source(pyfunc), args, pyfunc.__globals__, closure)
        shadowed = enter_hybrid_runtime(pyfunc)
        try:
            return pyfunc(*args, **kwargs)
        finally:
            restore_runtime(pyfunc, shadowed)

    return wrapped  # type: ignore[return-value]
