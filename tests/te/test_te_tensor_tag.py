"""te.tag_scope: computes declared in a scope get its tag; scopes do not nest."""

from __future__ import annotations

import pytest

from pytvm import te


def test_computes_in_a_with_block_get_the_tag() -> None:
    A = te.placeholder((4,), name="A")
    with te.tag_scope(tag="gemm"):
        B = te.compute((4,), lambda i: A[i] + 1.0, name="B")
    C = te.compute((4,), lambda i: A[i] + 1.0, name="C")
    assert (B.op.tag, C.op.tag) == ("gemm", "")


def test_a_decorated_function_tags_its_computes() -> None:
    @te.tag_scope(tag="conv")
    def double(x: te.Tensor) -> te.Tensor:
        return te.compute(x.shape, lambda i: x(i) * 2.0)

    assert double(te.placeholder((4,), name="A")).op.tag == "conv"
    assert te.TagScope.get_current() is None


def test_nested_scopes_and_explicit_tags_inside_a_scope_are_errors() -> None:
    A = te.placeholder((4,), name="A")
    with te.tag_scope(tag="outer"):
        with pytest.raises(ValueError, match="nested"):
            with te.tag_scope(tag="inner"):
                pass
        with pytest.raises(ValueError, match="nested"):
            te.compute((4,), lambda i: A[i], tag="explicit")
