"""Graph inputs whose dimensions are known only at run time, and their partial types.

A dimension is known only at run time when ``shape_dict`` gives it as ``relay.Any()`` (or
None: anything without an integer value), or when the model leaves it symbolic (a
``dim_param``, or no value) and ``shape_dict`` does not give the input. pytvm's graph IR is
static, so such a model is imported per the shapes each call gives (:mod:`.specialize`);
until then its parameters carry a :class:`PartialTensorType`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["PartialTensorType", "RunTimeVar", "run_time_inputs"]


@dataclass(frozen=True, slots=True)
class PartialTensorType:
    """A tensor type whose dimensions that are None are known only at run time."""

    shape: tuple[int | None, ...]
    dtype: str

    def accepts(self, shape: Iterable[int], dtype: str) -> bool:
        """Whether a tensor of ``shape`` and ``dtype`` has this type."""
        dims = tuple(shape)
        return (
            dtype == self.dtype
            and len(dims) == len(self.shape)
            and all(want is None or want == got for want, got in zip(self.shape, dims, strict=True))
        )

    def __str__(self) -> str:
        dims = ", ".join("?" if d is None else str(d) for d in self.shape)
        return f"Tensor[({dims}), {self.dtype}]"


@dataclass(frozen=True, slots=True, eq=False)
class RunTimeVar:
    """A parameter whose type has dimensions known only at run time (a graph ``Var``'s
    fields, with a :class:`PartialTensorType`).
    """

    name: str
    type_annotation: PartialTensorType

    @property
    def checked_type(self) -> PartialTensorType:
        """The declared type."""
        return self.type_annotation


def _is_run_time(dim: Any) -> bool:
    """Whether ``dim`` is a dimension known only at run time: None, or an object with no
    integer value (``relay.Any()``, whose ``int()`` raises ``TypeError``).
    """
    if dim is None:
        return True
    if isinstance(dim, (str, bytes)):
        return False  # malformed: the static import reports it
    try:
        int(dim)
    except TypeError:
        return True
    except ValueError:
        return False
    return False


def _given_dims(given: Any) -> tuple[int | None, ...] | None:
    """``shape_dict``'s shape with its run-time dimensions as None; None when it has none
    (or is malformed: the static import reports that).
    """
    if isinstance(given, (str, bytes)) or not isinstance(given, Iterable):
        return None
    dims = tuple(None if _is_run_time(d) else d for d in given)
    if None not in dims or not all(d is None or (isinstance(d, int) and d >= 0) for d in dims):
        return None
    return dims


def run_time_inputs(
    graph: Any,
    shape_dict: Mapping[str, Any],
    initializers: Mapping[str, Any],
    dtype_of: Callable[[Any], str],
) -> dict[str, PartialTensorType]:
    """The graph inputs (not initializers) with dimensions known only at run time, by name;
    ``dtype_of`` gives an input's element type.
    """
    out: dict[str, PartialTensorType] = {}
    for info in graph.input:
        if info.name in initializers or not info.type.HasField("tensor_type"):
            continue
        tensor = info.type.tensor_type
        if info.name in shape_dict:
            dims = _given_dims(shape_dict[info.name])
        elif tensor.HasField("shape"):
            dims = tuple(
                int(d.dim_value) if d.HasField("dim_value") and d.dim_value >= 0 else None
                for d in tensor.shape.dim
            )
            dims = dims if None in dims else None
        else:
            dims = None  # no shape at all: not even the rank is known (the import asks)
        if dims is not None:
            out[info.name] = PartialTensorType(dims, dtype_of(info))
    return out
