"""tvm.ir's structural functions compare nodes of either IR with that IR's comparison."""

from __future__ import annotations

import pytest

from pytvm import ir, relay
from pytvm.ffi.errors import TVMValueError


def _mod(scale: float) -> relay.IRModule:
    x = relay.var("x", shape=(3,))
    return relay.IRModule.from_expr(relay.Function([x], relay.multiply(x, relay.const(scale))))


def test_graph_modules_compare_by_structure() -> None:
    assert ir.structural_equal(_mod(2.0), _mod(2.0))
    assert ir.structural_hash(_mod(2.0)) == ir.structural_hash(_mod(2.0))
    ir.assert_structural_equal(_mod(2.0), _mod(2.0))
    with pytest.raises(TVMValueError, match="differ"):
        ir.assert_structural_equal(_mod(2.0), _mod(3.0))


def test_source_names_and_spans_are_records() -> None:
    name = relay.SourceName("model.onnx")
    span = relay.Span(name, 1, 2, 0, 4)
    assert span.source_name == ir.SourceName("model.onnx")
    with pytest.raises(TVMValueError):
        relay.Span(name, 3, 2, 0, 0)
