"""The knobs of a configuration space (TVM's ``autotvm.task.space`` transform spaces): each
space enumerates entities, and an entity applies one choice to a schedule.

Kinds, with the tag a record stores them under: split an axis (``"sp"``: :class:`SplitSpace`,
:class:`SplitEntity`), reorder axes (``"re"``), annotate axes (``"an"``: unroll, vectorize, or
where a cache stage is computed) and any other option (``"ot"``: ``define_knob``).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ...ffi.errors import TVMValueError
from ...tir.expr import IntImm, IterVar

__all__ = [
    "AnnotateEntity",
    "AnnotateSpace",
    "Axis",
    "InstantiationError",
    "OtherOptionEntity",
    "OtherOptionSpace",
    "ReorderEntity",
    "ReorderSpace",
    "SplitEntity",
    "SplitSpace",
    "TransformSpace",
    "VirtualAxis",
    "get_factors",
    "get_pow2s",
]


class InstantiationError(ValueError):
    """A configuration the template cannot instantiate (TVM's name)."""


@dataclass(frozen=True, slots=True)
class Axis:
    """An axis a knob produced: its space (None when the knob was not collected) and index."""

    space: Any
    index: int


def get_factors(n: int) -> list[int]:
    """Every divisor of ``n``, ascending.

    Examples
    --------
    >>> get_factors(12)
    [1, 2, 3, 4, 6, 12]
    """
    if n < 1:
        raise TVMValueError(f"get_factors: n={n}; expected a positive int")
    small = [i for i in range(1, math.isqrt(n) + 1) if n % i == 0]
    return sorted({*small, *(n // i for i in small)})


def get_pow2s(n: int) -> list[int]:
    """The powers of two up to ``n``, ascending (``[1, 2, 4]`` for 7)."""
    if n < 1:
        raise TVMValueError(f"get_pow2s: n={n}; expected a positive int")
    return [1 << x for x in range(n.bit_length())]


class TransformSpace:
    """A knob's space: its entities in order (``space[i]``, ``len(space)``)."""

    def __init__(self) -> None:
        self.ins: list[Any] = []
        self.num_output = 0
        self.entities: list[Any] = []

    def __len__(self) -> int:
        return len(self.entities)

    def __getitem__(self, index: int) -> Any:
        return self.entities[index]

    @staticmethod
    def get_num_output(*args: Any, **kwargs: Any) -> int:
        """How many axes applying this knob yields."""
        return 0


class VirtualAxis(TransformSpace):
    """An axis of a given length, from an int or an IterVar's constant extent (-1: unknown)."""

    name_ct = 0

    def __init__(self, var: int | IterVar | VirtualAxis, name: str | None = None) -> None:
        super().__init__()
        self.num_output = 1
        if name is None:
            name = f"axis_{VirtualAxis.name_ct}"
            VirtualAxis.name_ct += 1
        self.name = name
        if isinstance(var, bool) or not isinstance(var, int | IterVar | VirtualAxis):
            raise TVMValueError(
                f"autotvm axis: {var!r} ({type(var).__name__}); expected an int, an IterVar "
                "or a VirtualAxis"
            )
        if isinstance(var, int):
            self.length = var
        elif isinstance(var, VirtualAxis):
            self.length = var.length
        else:
            self.name = var.var.name
            extent = None if var.dom is None else var.dom.extent
            self.length = extent.value if isinstance(extent, IntImm) else -1

    @staticmethod
    def get_num_output(*args: Any, **kwargs: Any) -> int:
        """One axis."""
        return 1

    def __repr__(self) -> str:
        return f"vaxis({self.name})"


class SplitEntity:
    """Split sizes of one axis, outermost first (``-1``: whatever is left)."""

    def __init__(self, size: Sequence[int]) -> None:
        self.size = list(size)

    def apply(self, sch: Any, op: Any, axis: Any) -> list[Any]:
        """Split ``axis`` of ``sch[op]`` into ``len(size)`` axes, outermost first."""
        out = []
        for i in range(1, len(self.size)):
            outer, axis = sch[op].split(axis, factor=math.prod(self.size[i:]))
            out.append(outer)
        return [*out, axis]

    def __repr__(self) -> str:
        return str(self.size)


class SplitSpace(TransformSpace):
    """Ways to split one axis into ``num_outputs`` axes.

    ``policy``: ``"factors"`` (divisors, no tail), ``"power2"`` (powers of two, a tail
    allowed), ``"verbose"`` (both), ``"candidate"`` (the sizes in ``candidate``). Options:
    ``num_outputs``, ``max_factor``, ``no_tail``, ``filter``.
    """

    def __init__(self, axes: Sequence[VirtualAxis], policy: str, **kwargs: Any) -> None:
        super().__init__()
        self.policy = policy
        self.product = axes[0].length
        self.num_output = int(kwargs.get("num_outputs", 0))
        if self.num_output < 1:
            raise TVMValueError("define_split: num_outputs must be a positive int")
        keep: Callable[[SplitEntity], bool] = kwargs.get("filter") or (lambda _: True)
        if policy == "candidate":
            self.entities = [SplitEntity(size) for size in kwargs["candidate"]]
        else:
            self.factors = self._factors(policy, int(kwargs.get("max_factor", 1 << 31)))
            no_tail = bool(kwargs.get("no_tail", policy == "factors"))
            for inner in itertools.product(self.factors, repeat=self.num_output - 1):
                prod = math.prod(inner)
                if prod <= self.product and (self.product % prod == 0 or not no_tail):
                    self.entities.append(SplitEntity([-1, *reversed(inner)]))
        self.entities = [e for e in self.entities if keep(e)]

    def _factors(self, policy: str, max_factor: int) -> list[int]:
        if self.product < 1:
            raise TVMValueError(
                f"define_split: axis of length {self.product}; expected a constant length"
            )
        if policy == "factors":
            found = get_factors(self.product)
        elif policy == "power2":
            found = get_pow2s(self.product)
        elif policy == "verbose":
            found = sorted(set(get_factors(self.product)) | set(get_pow2s(self.product)))
        else:
            raise TVMValueError(
                f"define_split: policy {policy!r}; expected 'factors', 'power2', 'verbose' or "
                "'candidate'"
            )
        return [f for f in found if f <= max_factor]

    @staticmethod
    def get_num_output(*args: Any, **kwargs: Any) -> int:
        """``num_outputs`` axes."""
        return int(kwargs["num_outputs"])

    def __repr__(self) -> str:
        return (
            f"Split(policy={self.policy}, product={self.product}, "
            f"num_outputs={self.num_output}) len={len(self)}"
        )


class ReorderEntity:
    """A permutation of axes."""

    def __init__(self, perm: Sequence[int]) -> None:
        self.perm = list(perm)

    def apply(self, sch: Any, op: Any, axes: Sequence[Any]) -> list[Any]:
        """Reorder ``axes`` of ``sch[op]`` by the permutation; returns the new order."""
        order = [axes[i] for i in self.perm if i < len(axes)]
        sch[op].reorder(*order)
        return order

    def __repr__(self) -> str:
        return str(self.perm)


class ReorderSpace(TransformSpace):
    """Orders of axes: ``"identity"``, ``"all"`` permutations, or ``"candidate"`` orders."""

    def __init__(self, axes: Sequence[Any], policy: str, **kwargs: Any) -> None:
        super().__init__()
        self.ins = list(axes)
        self.policy = policy
        self.num_output = len(axes)
        n = len(axes)
        if policy == "identity":
            self.entities = [ReorderEntity(range(n))]
        elif policy == "all":
            self.entities = [ReorderEntity(p) for p in itertools.permutations(range(n))]
        elif policy == "candidate":
            self.entities = [
                ReorderEntity([list(axes).index(x) for x in order]) for order in kwargs["candidate"]
            ]
        else:
            raise TVMValueError(
                f"define_reorder: policy {policy!r}; expected 'identity', 'all' or 'candidate'"
            )

    @staticmethod
    def get_num_output(axes: Sequence[Any], *args: Any, **kwargs: Any) -> int:
        """One axis per input axis."""
        return len(axes)

    def __repr__(self) -> str:
        return f"Reorder(policy={self.policy}) len={len(self)}"


class AnnotateEntity:
    """One annotation per axis: ``"none"``, ``"unroll"``, ``"vec"``, ``"fuse"``; or, for a
    ``locate_cache`` knob, the index of the axis each cache stage is computed at.
    """

    def __init__(self, anns: Sequence[Any]) -> None:
        self.anns = list(anns)

    def apply(
        self,
        sch: Any,
        op: Any,
        axes: Sequence[Any],
        axis_lens: Sequence[int] | None = None,
        max_unroll: int | None = None,
        vec_size: Sequence[int] | None = None,
        cfg: Any = None,
        source: Sequence[Sequence[Any]] | None = None,
    ) -> list[Any]:
        """Annotate ``axes`` of ``sch[op]`` (or attach ``source`` stages); returns the axes."""
        axes = list(axes)
        if source is not None:
            for tensors, at in zip(source, self.anns, strict=False):
                for t in tensors:
                    sch[t].compute_at(sch[op], axes[at])
            return axes
        for i, ann in enumerate(self.anns):
            length = axis_lens[i] if axis_lens is not None else None
            if ann == "none":
                continue
            if ann == "unroll":
                if max_unroll and length is not None and length > max_unroll and cfg is not None:
                    cfg.raise_error("Too large factor for unrolling")
                sch[op].unroll(axes[i])
            elif ann == "vec":
                if vec_size and length not in vec_size and cfg is not None:
                    cfg.raise_error("Wrong size of lanes in vectorization")
                sch[op].vectorize(axes[i])
            elif ann == "fuse":
                axes[i + 1] = sch[op].fuse(axes[i], axes[i + 1])
            else:
                raise TVMValueError(
                    f"annotation {ann!r}; pytvm compiles for CPUs, expected 'none', 'unroll', "
                    "'vec' or 'fuse' (GPU thread bindings have no CPU meaning)"
                )
        return axes

    def __repr__(self) -> str:
        return str(self.anns)


class AnnotateSpace(TransformSpace):
    """Annotations of axes: a policy of ``none``/``unroll``/``vec`` words joined by ``_``
    (``"try_unroll_vec"``: each axis none, unrolled or vectorized, at most one vectorized),
    or ``"locate_cache"`` (``num_anchor`` axes to attach cache stages at).
    """

    def __init__(self, axes: Sequence[Any], policy: str, **kwargs: Any) -> None:
        super().__init__()
        self.ins = list(axes)
        self.policy = policy
        self.num_output = len(axes)
        self.num_axis = len(axes)
        if policy == "locate_cache":
            self.anns = list(itertools.combinations(range(self.num_axis), kwargs["num_anchor"]))
            self.entities = [AnnotateEntity(x) for x in self.anns]
            return
        words = policy.replace("try", "none").split("_")
        bad = [w for w in words if w not in ("none", "unroll", "vec")]
        if bad:
            raise TVMValueError(
                f"define_annotate: policy {policy!r}; expected words none/try/unroll/vec joined "
                "by '_', or 'locate_cache' (GPU binding policies have no CPU meaning)"
            )
        for anns in itertools.product(words, repeat=self.num_axis):
            if anns.count("vec") <= 1:
                self.entities.append(AnnotateEntity(anns))

    @staticmethod
    def get_num_output(axes: Sequence[Any], *args: Any, **kwargs: Any) -> int:
        """One axis per input axis."""
        return len(axes)

    def __repr__(self) -> str:
        return f"Annotate(policy={self.policy}) len={len(self)}"


class OtherOptionEntity:
    """One value of a ``define_knob`` knob (``cfg["unroll"].val``)."""

    def __init__(self, val: Any) -> None:
        self.val = val

    def __repr__(self) -> str:
        return str(self.val)


class OtherOptionSpace(TransformSpace):
    """The candidate values of a ``define_knob`` knob."""

    def __init__(self, axes: Sequence[Any], policy: str, **kwargs: Any) -> None:
        super().__init__()
        self.entities = [OtherOptionEntity(x) for x in kwargs["candidate"]]

    def __repr__(self) -> str:
        return f"OtherOption({self.entities}) len={len(self)}"
