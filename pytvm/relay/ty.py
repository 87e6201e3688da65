"""TVM's ``relay`` type names: ``TensorType``, ``TupleType`` (the graph IR's) and ``Any``."""

from __future__ import annotations

from dataclasses import dataclass

from ..graph import TensorType, TupleType

__all__ = ["Any", "TensorType", "TupleType"]


@dataclass(frozen=True, slots=True, eq=False)
class Any:
    """A dimension whose size is known only at run time (TVM's ``relay.Any()``).

    pytvm's graph IR has static shapes: a shape with an ``Any`` is refused where it is used
    (``from_onnx`` asks for the dimension's size), and ``int(Any())`` raises ``TypeError``.
    """

    def __int__(self) -> int:
        raise TypeError(
            "relay.Any() is a dimension known only at run time; pytvm's graph IR has static "
            "shapes: give the dimension's size instead"
        )

    def __index__(self) -> int:
        return self.__int__()

    def __repr__(self) -> str:
        return "?"
