"""Types of graph expressions: tensors with static shapes, and tuples of them."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..ffi.errors import TVMTypeError, TVMValueError

__all__ = ["MAX_ELEMENTS", "TensorType", "TupleType", "Type", "tensor_type_of"]

#: The most elements a tensor may have: its flat index must fit an int64.
MAX_ELEMENTS = 2**63 - 1


@dataclass(frozen=True, slots=True)
class TensorType:
    """A tensor of a static ``shape`` and a ``dtype`` (``"float32"``, ``"int64"``, ``"bool"``)."""

    shape: tuple[int, ...]
    dtype: str

    def __post_init__(self) -> None:
        shape = tuple(self.shape)
        for dim in shape:
            if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)) or dim < 0:
                raise TVMValueError(
                    f"TensorType: dimension {dim!r} of shape {shape} must be an integer >= 0"
                )
        object.__setattr__(self, "shape", tuple(int(d) for d in shape))
        if math.prod(self.shape) > MAX_ELEMENTS:
            raise TVMValueError(
                f"TensorType: shape {list(self.shape)} has {math.prod(self.shape)} elements, "
                f"more than {MAX_ELEMENTS} (2**63 - 1, the most an int64 index reaches); "
                "a shape this large is a mistake or a damaged model"
            )
        try:
            np.dtype(self.dtype)
        except TypeError:
            raise TVMTypeError(f"TensorType: unknown dtype {self.dtype!r}") from None

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return len(self.shape)

    @property
    def size(self) -> int:
        """The number of elements."""
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        """The bytes the tensor occupies."""
        return self.size * np.dtype(self.dtype).itemsize

    def __str__(self) -> str:
        return f"Tensor[({', '.join(map(str, self.shape))}), {self.dtype}]"


@dataclass(frozen=True, slots=True)
class TupleType:
    """A tuple of values of the ``fields`` types (an operator with several outputs)."""

    fields: tuple[Type, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "fields", tuple(self.fields))

    def __str__(self) -> str:
        return f"({', '.join(map(str, self.fields))})"


Type = TensorType | TupleType


def tensor_type_of(value: np.ndarray) -> TensorType:
    """The type of a numpy array."""
    return TensorType(tuple(value.shape), str(value.dtype))
