"""BindParams: parameters given values become constants (TVM's ``bind_params_by_name``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ...ffi.errors import TVMValueError
from ..expr import Constant, Expr, Function, Var
from ..functor import rewrite

__all__ = ["bind_params"]


def _as_array(value: Any) -> np.ndarray:
    numpy = getattr(value, "numpy", None)
    return np.asarray(numpy() if callable(numpy) else value)


def bind_params(func: Function, params: Mapping[str, Any]) -> Function:
    """``func`` with each parameter named in ``params`` replaced by a constant of its value.

    A value must match the parameter's shape and dtype; a name that is no parameter is an error.
    """
    by_name = {p.name: p for p in func.params}
    unknown = sorted(set(params) - set(by_name))
    if unknown:
        raise TVMValueError(
            f"bind_params: {unknown} are not parameters of the function; it has {sorted(by_name)}"
        )
    constants: dict[int, Constant] = {}
    for name, value in params.items():
        var = by_name[name]
        array = _as_array(value)
        ty = var.type_annotation
        if tuple(array.shape) != getattr(ty, "shape", None) or str(array.dtype) != getattr(
            ty, "dtype", None
        ):
            raise TVMValueError(
                f"bind_params: parameter {name!r} is {ty}, the value has shape "
                f"{tuple(array.shape)} and dtype {array.dtype}"
            )
        constants[id(var)] = Constant(array)

    def replace(node: Expr) -> Expr | None:
        return constants.get(id(node)) if isinstance(node, Var) else None

    (body,), _ = rewrite((func.body,), replace)
    kept = tuple(p for p in func.params if id(p) not in constants)
    return Function(kept, body, func.attrs)
