"""``enable_span_filling`` / ``disable_span_filling``: TVM's test switches for whether frontends
tag the nodes they make with source spans (``PassContext`` option
``relay.frontend.fill_span``). pytvm's graph nodes carry no spans, so either way an import
builds the same graph; the switches set the option as TVM's do.
"""

from __future__ import annotations

from ..ir.transform import PassContext

__all__ = ["FILL_SPAN", "disable_span_filling", "enable_span_filling"]

#: The ``PassContext`` option the switches set.
FILL_SPAN = "relay.frontend.fill_span"


class _SpanFilling:
    """A ``with`` block under a ``PassContext`` whose ``fill_span`` option is ``on``."""

    def __init__(self, on: bool) -> None:
        self._ctx = PassContext(config={FILL_SPAN: on})  # a fresh context, as TVM's

    def __enter__(self) -> PassContext:
        return self._ctx.__enter__()

    def __exit__(self, *exc: object) -> None:
        self._ctx.__exit__(*exc)


class enable_span_filling(_SpanFilling):
    """Frontends fill spans inside the block (TVM's default)."""

    def __init__(self) -> None:
        super().__init__(True)


class disable_span_filling(_SpanFilling):
    """Frontends fill no spans inside the block."""

    def __init__(self) -> None:
        super().__init__(False)
