"""Scans (TVM's ``te.scan``): a recurrence over the first axis, ``state[t]`` from ``state[t-1]``.

``te.scan(init, update, state_placeholder)`` declares outputs shaped like ``update``: rows
``[0, init.shape[0])`` come from ``init``; each later row ``t`` is ``update``'s row ``t``,
which reads the rows before it through ``state_placeholder``. Several states advance together
when lists are given (one output each). A schedule runs the ops between ``update`` and the
state placeholders (and ``inputs``) inside one loop over the scan axis.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ..ffi.errors import TVMValueError
from ..tir.arith import Analyzer
from ..tir.expr import IterVar, IterVarType, PrimExpr, Range, Var, const
from .tag import current_tag
from .tensor import Operation, Tensor

__all__ = ["ScanOp", "scan"]


@dataclass(frozen=True, slots=True, eq=False)
class ScanOp(Operation):
    """Outputs whose rows after ``init``'s come from ``update``, row by row (TVM's ``ScanOp``).

    ``scan_axis`` runs over the rows ``update`` computes; ``spatial_axis_`` holds one axis per
    non-scan dimension of each output, in order.
    """

    name: str
    tag: str
    attrs: Mapping[str, Any]
    scan_axis: IterVar
    init: tuple[Tensor, ...]
    update: tuple[Tensor, ...]
    state_placeholder: tuple[Tensor, ...]
    inputs: tuple[Tensor, ...]
    spatial_axis_: tuple[IterVar, ...] = field(default=())

    def __post_init__(self) -> None:
        object.__setattr__(self, "attrs", MappingProxyType(dict(self.attrs)))

    @property
    def num_outputs(self) -> int:
        """One output per state."""
        return len(self.update)

    @property
    def input_tensors(self) -> tuple[Tensor, ...]:
        """The initial values and the updates (what the scan's rows are copied from)."""
        return (*self.init, *self.update)

    def output_shape(self, index: int) -> tuple[PrimExpr, ...]:
        """The shape of state ``index`` (its update's)."""
        return self.update[index].shape

    def output_dtype(self, index: int) -> str:
        """The element type of state ``index``."""
        return self.update[index].dtype


def _tensors(value: Tensor | Sequence[Tensor] | None, what: str) -> tuple[Tensor, ...]:
    if value is None:
        return ()
    items = (value,) if isinstance(value, Tensor) else tuple(value)
    for t in items:
        if not isinstance(t, Tensor):
            raise TVMValueError(f"scan: {what} must be tensors, got {t!r}")
    return items


def scan(
    init: Tensor | Sequence[Tensor],
    update: Tensor | Sequence[Tensor],
    state_placeholder: Tensor | Sequence[Tensor],
    inputs: Tensor | Sequence[Tensor] | None = None,
    name: str = "scan",
    tag: str = "",
    attrs: Mapping[str, Any] | None = None,
) -> Tensor | list[Tensor]:
    """The recurrence ``state[t] = update(state[t-1], ...)`` started from ``init``.

    Returns the scan's output tensor (a list of them for several states). ``inputs`` names the
    tensors the update reads each step (their readers join the scan's body).

    Examples
    --------
    >>> from pytvm import te
    >>> m, n = te.var("m"), te.var("n")
    >>> X = te.placeholder((m, n), name="X")
    >>> state = te.placeholder((m, n))
    >>> init = te.compute((1, n), lambda _, i: X[0, i])
    >>> update = te.compute((m, n), lambda t, i: state[t - 1, i] + X[t, i])
    >>> res = te.scan(init, update, state)
    >>> [str(d) for d in res.shape], str(res.op.scan_axis.dom.min)
    (['m', 'n'], '1')
    """
    inits = _tensors(init, "init")
    updates = _tensors(update, "update")
    states = _tensors(state_placeholder, "state_placeholder")
    if not updates or len(inits) != len(updates) or len(states) != len(updates):
        raise TVMValueError(
            f"scan {name!r}: init, update and state_placeholder must have one tensor per "
            f"state; got {len(inits)}, {len(updates)} and {len(states)}"
        )
    ana = Analyzer()
    for k, (i, u, s) in enumerate(zip(inits, updates, states, strict=True)):
        if len(i.shape) != len(u.shape) or len(s.shape) != len(u.shape):
            raise TVMValueError(
                f"scan {name!r}: state {k}: init, update and state_placeholder must have the "
                f"same rank, got {len(i.shape)}, {len(u.shape)} and {len(s.shape)}"
            )
        for d in range(1, len(u.shape)):
            if not ana.can_prove(i.shape[d] == u.shape[d]) or not ana.can_prove(
                s.shape[d] == u.shape[d]
            ):
                raise TVMValueError(
                    f"scan {name!r}: state {k}: dimension {d} differs between init "
                    f"({i.shape[d]}), update ({u.shape[d]}) and state ({s.shape[d]})"
                )
        if u.dtype != i.dtype or u.dtype != s.dtype:
            raise TVMValueError(
                f"scan {name!r}: state {k}: init, update and state must share a dtype, got "
                f"{i.dtype}, {u.dtype} and {s.dtype}"
            )
    start = inits[0].shape[0]
    total = updates[0].shape[0]
    rng = Range(start, ana.simplify(total - start))
    scan_axis = IterVar(rng, Var(f"{name}.idx", start.dtype), IterVarType.ORDERED)
    spatial = tuple(
        IterVar(
            Range(const(0, u.shape[d].dtype), u.shape[d]),
            Var(f"{name}.out{k}.i{d}"),
            IterVarType.OPAQUE,
        )
        for k, u in enumerate(updates)
        for d in range(1, len(u.shape))
    )
    op = ScanOp(
        name,
        current_tag(tag, name),
        dict(attrs or {}),
        scan_axis,
        inits,
        updates,
        states,
        _tensors(inputs, "inputs"),
        spatial,
    )
    outputs = [op.output(k) for k in range(op.num_outputs)]
    return outputs[0] if len(outputs) == 1 else outputs
