"""Errors of the ONNX importer: what failed, at which node, and what to do about it."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from ...ffi.errors import OpNotImplemented, TVMValueError

__all__ = [
    "ConstantSizeError",
    "DynamicValueError",
    "OnnxImportError",
    "UnknownInputError",
    "UnsupportedOperatorsError",
    "bytes_text",
]


class OnnxImportError(TVMValueError):
    """An ONNX model could not be imported (it does not parse, a shape is unknown, a node's
    attributes or inputs are invalid).
    """


class UnknownInputError(OnnxImportError, AssertionError):
    """``shape_dict`` names inputs the graph does not have; ``names`` lists them (TVM raises an
    ``AssertionError`` here, so this is one too).
    """

    def __init__(self, names: Sequence[str], graph_inputs: Sequence[str]) -> None:
        self.names = sorted(names)
        super().__init__(
            f"from_onnx: shape_dict gives shapes for {self.names}, which are not inputs of the "
            f"graph; its inputs are {list(graph_inputs)}: fix the names in shape_dict"
        )


class UnsupportedOperatorsError(OnnxImportError, OpNotImplemented):
    """The model uses operators the importer does not convert; ``unsupported`` lists each
    ``(op_type, node_name, opset)``.
    """

    def __init__(self, unsupported: Sequence[tuple[str, str, int]]) -> None:
        self.unsupported = list(unsupported)
        lines = "\n".join(
            f"  {op} (node {name!r}, opset {opset})" for op, name, opset in self.unsupported
        )
        kinds = sorted({op for op, _, _ in self.unsupported})
        super().__init__(
            f"the ONNX model uses {len(kinds)} operator kind(s) the importer does not "
            f"support ({', '.join(kinds)}), at {len(self.unsupported)} node(s):\n{lines}"
        )


class DynamicValueError(OnnxImportError):
    """A node needs an input's value at import time (a shape, axes, pads...) but the value is
    computed from graph inputs; ``graph_inputs`` names them (make them initializers of the
    model to import it).
    """

    def __init__(self, message: str, graph_inputs: Collection[str]) -> None:
        self.graph_inputs = sorted(graph_inputs)
        super().__init__(message)


def bytes_text(n: int) -> str:
    """``n`` bytes in the largest binary unit that keeps it >= 1 (``16 GiB``), then exact.

    Examples
    --------
    >>> bytes_text(17179869184)
    '16 GiB (17179869184 bytes)'
    """
    for unit, scale in (("EiB", 2**60), ("PiB", 2**50), ("TiB", 2**40), ("GiB", 2**30)):
        if n >= scale:
            return f"{n / scale:.3g} {unit} ({n} bytes)"
    if n >= 2**20:
        return f"{n / 2**20:.3g} MiB ({n} bytes)"
    return f"{n} bytes"


class ConstantSizeError(OnnxImportError):
    """A node would make a constant at import time (a shape filled, a range, a folded call)
    larger than the limit ``max_constant_bytes``; ``nbytes`` is its size, ``limit`` the limit.
    """

    def __init__(self, where: str, what: str, shape: str, nbytes: int, limit: int) -> None:
        self.nbytes = nbytes
        self.limit = limit
        super().__init__(
            f"{where}: {what} would be a constant of shape {shape}, {bytes_text(nbytes)}, "
            f"over the limit of {bytes_text(limit)} on one constant made at import (is the model "
            "damaged or hostile?); if the model is trusted, raise the limit: "
            "from_onnx(..., max_constant_bytes=N), "
            "PassContext(config={'graph.max_constant_bytes': N}) or "
            "`pytvm compile --max-constant-bytes N`"
        )
