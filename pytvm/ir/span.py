"""``SourceName`` and ``Span``: where in a source (a model file, a script) a node came from.

TVM attaches spans to IR nodes; pytvm's IRs do not carry them, so these are plain records a
frontend or a user can build, compare and print (``relay.SourceName("model.onnx")``).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ffi.errors import TVMValueError

__all__ = ["SourceName", "Span"]


@dataclass(frozen=True, slots=True)
class SourceName:
    """The name of a source (TVM's ``tvm.ir.SourceName``).

    Examples
    --------
    >>> SourceName("model.onnx").name
    'model.onnx'
    """

    name: str

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise TVMValueError(f"SourceName: name must be str, got {type(self.name).__name__}")


@dataclass(frozen=True, slots=True)
class Span:
    """A range of lines and columns in a source (TVM's ``tvm.ir.Span``)."""

    source_name: SourceName
    line: int
    end_line: int
    column: int
    end_column: int

    def __post_init__(self) -> None:
        if not isinstance(self.source_name, SourceName):
            raise TVMValueError(
                f"Span: source_name must be a SourceName, got {type(self.source_name).__name__}"
            )
        if self.end_line < self.line:
            raise TVMValueError(f"Span: end_line {self.end_line} is before line {self.line}")
