"""Errors of the ONNX importer: what failed, at which node, and what to do about it."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from ...ffi.errors import OpNotImplemented, TVMValueError

__all__ = ["DynamicValueError", "OnnxImportError", "UnsupportedOperatorsError"]


class OnnxImportError(TVMValueError):
    """An ONNX model could not be imported (it does not parse, a shape is unknown, a node's
    attributes or inputs are invalid).
    """


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
