"""Layout maps of ``Stage.transform_layout``: an index function, its shape and its inverse.

``LayoutMap.from_func(lambda i, j: [j, i], ndim=2)`` records where each logical index of a
tensor lives in its physical buffer (TVM's ``IndexMap``; ``AXIS_SEPARATOR`` in the returned
list marks where TVM would start another physical dimension).

The map must be a bijection made of splits and fusions of the logical axes (no padding): each
physical index is a sum ``sum_k ((x_k // lower_k) % extent_k) * scale_k`` whose terms form a
mixed radix (``scale_{k+1} = scale_k * extent_k``), and the pieces of each logical axis ``x``
cover it exactly (``lower_{k+1} = lower_k * extent_k``, their extents multiplying to ``x``'s).
The inverse then reads each piece back: ``x = sum_k ((y // scale_k) % extent_k) * lower_k``.
A map that would need padding (``c % 4`` of an axis of 3) raises ``TVMError``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ...ffi.errors import TVMError, TVMValueError
from ...tir.arith import Analyzer
from ...tir.expr import IterVar, PrimExpr, Var, const, convert
from ...tir.expr_operators import Add, Div, FloorDiv, FloorMod, IntImm, Mod, Mul
from ...tir.functor import substitute

__all__ = ["AXIS_SEPARATOR", "LayoutMap", "physical_indices", "physical_shape"]


class _AxisSeparator:
    """The marker between physical dimensions in a ``transform_layout`` result."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "AXIS_SEPARATOR"


#: Put between the indices a mapping function returns to start a new physical dimension.
AXIS_SEPARATOR = _AxisSeparator()


@dataclass(frozen=True, slots=True)
class _Piece:
    """``((var // lower) % extent) * scale``: one piece of a logical axis in a physical index."""

    var: Var
    lower: int
    extent: PrimExpr
    scale: int


@dataclass(frozen=True, slots=True, eq=False)
class LayoutMap:
    """``initial`` logical indices to ``final`` physical ones (TVM's ``IndexMap``)."""

    initial: tuple[Var, ...]
    final: tuple[PrimExpr, ...]
    axis_separators: tuple[int, ...] = ()

    @staticmethod
    def from_func(func: Callable[..., Any], ndim: int, dtype: str = "int32") -> LayoutMap:
        """The map a mapping function describes, over ``ndim`` logical indices named after its
        parameters (``*indices`` takes the ones the named parameters leave).
        """
        names = _param_names(func, ndim)
        initial = tuple(Var(n.lstrip("*="), dtype) for n in names)
        pos = [v for v, n in zip(initial, names, strict=True) if not n.startswith("*")]
        star = [v for v, n in zip(initial, names, strict=True) if n.startswith("*")]
        kw = {n: v for v, n in zip(initial, names, strict=True) if n.startswith("=")}
        npos = sum(1 for n in names if not n.startswith(("*", "=")))
        result = func(*pos[:npos], *star, **{k[1:]: v for k, v in kw.items()})
        items = list(result) if isinstance(result, (list, tuple)) else [result]
        final: list[PrimExpr] = []
        separators: list[int] = []
        for item in items:
            if item is AXIS_SEPARATOR:
                separators.append(len(final))
            else:
                final.append(convert(item.var if isinstance(item, IterVar) else item))
        return LayoutMap(initial, tuple(final), tuple(separators))

    def map_indices(self, indices: Sequence[PrimExpr]) -> tuple[PrimExpr, ...]:
        """The physical indices of the logical ``indices``."""
        if len(indices) != len(self.initial):
            raise TVMValueError(
                f"layout map of {len(self.initial)} indices applied to {len(indices)}"
            )
        vmap: dict[Var, PrimExpr] = dict(zip(self.initial, indices, strict=True))
        return tuple(substitute(f, vmap) for f in self.final)

    def inverse(
        self, shape: Sequence[PrimExpr], what: str
    ) -> tuple[tuple[PrimExpr, ...], tuple[Var, ...], tuple[PrimExpr, ...]]:
        """``(physical shape, physical index vars, logical indices in those vars)``."""
        extents = dict(zip(self.initial, shape, strict=True))
        dims = [_mixed_radix(_pieces(f, extents, what), what) for f in self.final]
        new_shape = tuple(_product([p.extent for p in d]) for d in dims)
        new_vars = tuple(
            Var(f.name if isinstance(f, Var) else f"ax{k}", "int32")
            for k, f in enumerate(self.final)
        )
        ana = Analyzer()
        logical: list[PrimExpr] = []
        for v in self.initial:
            mine = sorted(
                (
                    (p, y, len(d))
                    for d, y in zip(dims, new_vars, strict=True)
                    for p in d
                    if p.var is v
                ),
                key=lambda t: t[0].lower,
            )
            value: PrimExpr = const(0)
            lower = 1
            for p, y, nterms in mine:
                if p.lower != lower:
                    raise TVMError(f"{what}: the layout map is not a bijection of axis {v.name}")
                part: PrimExpr = y
                if nterms > 1:
                    part = (y // p.scale) % p.extent if p.scale > 1 else y % p.extent
                value = value + (part * p.lower if p.lower > 1 else part)
                if len(mine) > 1 or p.lower > 1:
                    lower = p.lower * _int(p.extent, what)
            if not mine:
                covered = ana.can_prove(extents[v] == 1)
            elif len(mine) == 1 and lower == 1:
                covered = ana.can_prove(mine[0][0].extent == extents[v])
            else:
                covered = ana.can_prove(extents[v] == lower)
            if not covered:
                raise TVMError(
                    f"{what}: the layout map does not cover axis {v.name} (extent "
                    f"{extents[v]}) exactly once; a transform that pads or drops an axis is "
                    "not supported"
                )
            logical.append(ana.simplify(value))
        return new_shape, new_vars, tuple(logical)


def _param_names(func: Callable[..., Any], ndim: int) -> list[str]:
    """Names of the logical indices: positional ones, ``*``-prefixed varargs, then ``=``-
    prefixed keyword-only ones (``lambda *indices, n: ...``).
    """
    try:
        params = list(inspect.signature(func).parameters.values())
    except (TypeError, ValueError) as err:
        raise TVMValueError(f"transform_layout: cannot read the parameters of {func!r}") from err
    pos = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    kw = [p.name for p in params if p.kind is p.KEYWORD_ONLY]
    star = next((p.name for p in params if p.kind is p.VAR_POSITIONAL), None)
    nstar = ndim - len(pos) - len(kw)
    if nstar < 0 or (nstar > 0 and star is None):
        raise TVMValueError(
            f"transform_layout: the mapping function takes {len(pos) + len(kw)} indices; the "
            f"tensor has {ndim} dimensions"
        )
    return [*pos, *(f"*{star}_{k}" for k in range(nstar)), *(f"={n}" for n in kw)]


def _int(e: PrimExpr, what: str) -> int:
    if not isinstance(e, IntImm):
        raise TVMValueError(
            f"{what}: a layout map that splits or fuses an axis needs constant extents, got {e}"
        )
    return int(e.value)


def _pieces(e: PrimExpr, extents: dict[Var, PrimExpr], what: str) -> list[_Piece]:
    """``e`` as a sum of pieces of the logical axes."""
    if isinstance(e, Var):
        if e not in extents:
            raise TVMValueError(f"{what}: layout index {e} is not a logical index")
        return [_Piece(e, 1, extents[e], 1)]
    if isinstance(e, IntImm) and e.value == 0:
        return []
    if isinstance(e, Add):
        return _pieces(e.a, extents, what) + _pieces(e.b, extents, what)
    if isinstance(e, Mul):
        scaled, factor = (e.a, e.b) if isinstance(e.b, IntImm) else (e.b, e.a)
        if isinstance(factor, IntImm):
            c = int(factor.value)
            return [
                _Piece(p.var, p.lower, p.extent, p.scale * c)
                for p in _pieces(scaled, extents, what)
            ]
    if isinstance(e, (FloorDiv, Div, FloorMod, Mod)) and isinstance(e.b, IntImm):
        inner = _pieces(e.a, extents, what)
        c = int(e.b.value)
        if len(inner) != 1 or inner[0].scale != 1:
            raise TVMValueError(f"{what}: layout index {e} divides a sum; split axes one at a time")
        p = inner[0]
        ext = _int(p.extent, what)
        if ext % c != 0:
            raise TVMError(
                f"{what}: layout index {e} would pad axis {p.var.name} (extent {ext} is not a "
                f"multiple of {c}); padded transforms are not supported by te schedules"
            )
        if isinstance(e, (FloorDiv, Div)):
            return [_Piece(p.var, p.lower * c, const(ext // c), 1)]
        return [_Piece(p.var, p.lower, const(c), 1)]
    raise TVMValueError(
        f"{what}: layout index {e} is not a split or fusion of the logical indices "
        "(use +, * by a constant, // and % by a constant)"
    )


def _mixed_radix(pieces: list[_Piece], what: str) -> list[_Piece]:
    """``pieces`` (of one physical index) by scale, checked to form a mixed radix."""
    pieces = [p for p in pieces if not (isinstance(p.extent, IntImm) and p.extent.value == 1)]
    pieces.sort(key=lambda p: p.scale)
    expected = 1
    for k, p in enumerate(pieces):
        if p.scale != expected:
            raise TVMError(f"{what}: a layout index is not a bijection (scale {p.scale})")
        if k + 1 < len(pieces):
            expected *= _int(p.extent, what)
    return pieces


def _product(values: list[PrimExpr]) -> PrimExpr:
    out: PrimExpr = const(1)
    for v in values:
        out = v if isinstance(out, IntImm) and out.value == 1 else out * v
    result: PrimExpr = Analyzer().simplify(out)
    return result


def physical_shape(
    maps: Sequence[LayoutMap], shape: Sequence[PrimExpr], what: str
) -> tuple[PrimExpr, ...]:
    """The buffer shape of a tensor of logical ``shape`` after the layout ``maps``, in order.

    A map with axis separators needs a buffer of several physical dimensions, which pytvm's
    flat CPU buffers do not have: it raises ``TVMValueError``.
    """
    out = tuple(shape)
    for m in maps:
        if m.axis_separators:
            raise TVMValueError(
                f"{what}: the layout transform has axis separators (te.AXIS_SEPARATOR), which "
                "need multi-dimensional physical buffers; pytvm's CPU buffers are flat, so "
                "leave the separators out"
            )
        out = m.inverse(out, what)[0]
    return out


def physical_indices(
    maps: Sequence[LayoutMap], indices: Sequence[PrimExpr]
) -> tuple[PrimExpr, ...]:
    """The buffer indices of the logical ``indices`` after the layout ``maps``, in order."""
    out = tuple(indices)
    for m in maps:
        out = m.map_indices(out)
    return out
