"""Configuration spaces of tunable templates (TVM's ``autotvm.task.space``).

A template receives ``cfg`` and declares its knobs on it (``cfg.define_split("tile_x", x,
num_outputs=2)``), then reads the chosen entity by name (``cfg["tile_x"].apply(s, C, x)``).
Declaring collects the knob into the space when ``cfg`` is a :class:`ConfigSpace`; a
:class:`ConfigEntity` (one point of a space, e.g. from a tuning record) already holds its
choices, so declaring changes nothing. A :class:`FallbackConfigEntity` is what a template gets
when no record matches: each knob starts at its space's first entity and the template may set
better defaults (``fallback_split``, ``cfg["k"] = OtherOptionEntity(v)``).
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from typing import Any

from ...ffi.errors import TVMIndexError, TVMValueError
from .knobs import (
    AnnotateEntity,
    AnnotateSpace,
    Axis,
    InstantiationError,
    OtherOptionEntity,
    OtherOptionSpace,
    ReorderEntity,
    ReorderSpace,
    SplitEntity,
    SplitSpace,
    TransformSpace,
    VirtualAxis,
    get_factors,
    get_pow2s,
)

__all__ = [
    "AnnotateEntity",
    "AnnotateSpace",
    "Axis",
    "ConfigEntity",
    "ConfigSpace",
    "FallbackConfigEntity",
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

#: Record tags of the entity kinds (TVM's JSON format).
_KIND_TAGS: tuple[tuple[type, str, str], ...] = (
    (SplitEntity, "sp", "size"),
    (ReorderEntity, "re", "perm"),
    (AnnotateEntity, "an", "anns"),
    (OtherOptionEntity, "ot", "val"),
)


class ConfigSpace:
    """The knobs a template declares and, for each, its space (``space_map``) and current
    entity (``cfg[name]``).
    """

    def __init__(self) -> None:
        self.space_map: OrderedDict[str, TransformSpace] = OrderedDict()
        self._collect = True
        self._entity_map: OrderedDict[str, Any] = OrderedDict()
        self._constraints: list[Any] = []
        self.errors: list[str] = []
        self.code_hash: str | None = None
        self.flop: float = 0
        self.cost: float | None = None
        self.is_fallback = False

    @staticmethod
    def axis(var: Any) -> VirtualAxis:
        """A placeholder axis of ``var``'s length (an int or an IterVar)."""
        return VirtualAxis(var)

    reduce_axis = axis

    def define_split(
        self, name: str, axis: Any, policy: str = "factors", **kwargs: Any
    ) -> list[Axis]:
        """Declare a knob splitting ``axis`` into ``num_outputs`` axes (see ``SplitSpace``)."""
        kwargs.setdefault("num_outputs", 2)
        return self._add_new_transform(SplitSpace, name, [axis], policy, **kwargs)

    def define_reorder(
        self, name: str, axes: Sequence[Any], policy: str, **kwargs: Any
    ) -> list[Axis]:
        """Declare a knob ordering ``axes`` (see ``ReorderSpace``)."""
        return self._add_new_transform(ReorderSpace, name, axes, policy, **kwargs)

    def define_annotate(
        self, name: str, axes: Sequence[Any], policy: str, **kwargs: Any
    ) -> list[Axis]:
        """Declare a knob annotating ``axes`` (see ``AnnotateSpace``)."""
        return self._add_new_transform(AnnotateSpace, name, axes, policy, **kwargs)

    def define_knob(self, name: str, candidate: Sequence[Any]) -> list[Axis]:
        """Declare a knob taking one of ``candidate`` (read as ``cfg[name].val``)."""
        return self._add_new_transform(OtherOptionSpace, name, [], "", candidate=candidate)

    def add_flop(self, flop: float) -> None:
        """Add ``flop`` floating-point operations to the template's count."""
        self.flop += float(flop)

    def raise_error(self, msg: str) -> None:
        """Mark this configuration invalid, with the reason."""
        self.errors.append(msg)

    def valid(self) -> bool:
        """Whether no knob reported this configuration invalid."""
        return not self.errors

    def _add_new_transform(
        self, space_class: Any, name: str, axes: Sequence[Any], policy: str, **kwargs: Any
    ) -> list[Axis]:
        if self._collect and not (self.is_fallback and name in self._entity_map):
            vaxes = [a if isinstance(a, VirtualAxis | Axis) else self.axis(a) for a in axes]
            space = space_class(vaxes, policy, **kwargs)
            if not len(space):
                raise TVMValueError(f"knob {name!r}: its space {space!r} is empty")
            self.space_map[name] = space
            self._entity_map[name] = space[0]
            return [Axis(space, i) for i in range(space.num_output)]
        count = space_class.get_num_output(axes, policy, **kwargs)
        return [Axis(None, i) for i in range(count)]

    @property
    def range_length(self) -> int:
        """Points in the space: the product of the knobs' space sizes."""
        return math.prod(len(s) for s in self.space_map.values())

    def __len__(self) -> int:
        return self.range_length

    def get(self, index: int) -> ConfigEntity:
        """The point ``index`` of the space (the first knob varies fastest)."""
        if not 0 <= index < self.range_length:
            raise TVMIndexError(
                f"config index {index} out of range; the space has {self.range_length} points"
            )
        entities: OrderedDict[str, Any] = OrderedDict()
        rest = index
        for name, space in self.space_map.items():
            entities[name] = space[rest % len(space)]
            rest //= len(space)
        return ConfigEntity(index, self.code_hash, entities, self._constraints)

    def __iter__(self) -> Iterator[str]:
        return iter(self._entity_map)

    def __getitem__(self, name: str) -> Any:
        """The current entity of knob ``name``."""
        try:
            return self._entity_map[name]
        except KeyError:
            raise TVMValueError(
                f"no knob {name!r} in this config; declared: {list(self._entity_map)}"
            ) from None

    def __repr__(self) -> str:
        rows = "".join(f"  {i:2d} {n}: {s}\n" for i, (n, s) in enumerate(self.space_map.items()))
        return f"ConfigSpace (len={len(self)}, space_map=\n{rows})"


class ConfigEntity(ConfigSpace):
    """One point of a space: a chosen entity per knob (what a tuning record stores)."""

    def __init__(
        self,
        index: int,
        code_hash: str | None,
        entity_map: OrderedDict[str, Any],
        constraints: list[Any],
    ) -> None:
        super().__init__()
        self.index = index
        self._collect = False
        self._entity_map = entity_map
        self._constraints = constraints
        self.code_hash = code_hash

    def get_other_option(self) -> dict[str, Any]:
        """The values of the ``define_knob`` knobs, by name."""
        return {k: v.val for k, v in self._entity_map.items() if isinstance(v, OtherOptionEntity)}

    def to_json_dict(self) -> dict[str, Any]:
        """The record form: ``{"index", "code_hash", "entity": [[name, tag, value], ...]}``."""
        entity = []
        for name, value in self._entity_map.items():
            kind = next((k for k in _KIND_TAGS if isinstance(value, k[0])), None)
            if kind is None:
                raise TVMValueError(f"knob {name!r}: {value!r} is not a knob entity")
            entity.append([name, kind[1], getattr(value, kind[2])])
        return {"index": int(self.index), "code_hash": self.code_hash, "entity": entity}

    @staticmethod
    def from_json_dict(json_dict: dict[str, Any]) -> ConfigEntity:
        """The entity a record's ``config`` field describes (inverse of ``to_json_dict``)."""
        by_tag = {tag: cls for cls, tag, _ in _KIND_TAGS}
        entities: OrderedDict[str, Any] = OrderedDict()
        for name, tag, value in json_dict["entity"]:
            if tag not in by_tag:
                raise TVMValueError(
                    f"record knob {name!r}: kind {tag!r}; expected one of {sorted(by_tag)}"
                )
            entities[str(name)] = by_tag[tag](value)
        return ConfigEntity(json_dict["index"], json_dict.get("code_hash"), entities, [])

    def __repr__(self) -> str:
        body = ", ".join(f"{k!r}: {v}" for k, v in self._entity_map.items())
        return f"[{body}],{self.code_hash},{self.index}"


class FallbackConfigEntity(ConfigSpace):
    """The configuration a template gets when no record matches its workload: each knob at
    its space's first entity until the template sets a default.
    """

    def __init__(self) -> None:
        super().__init__()
        self.is_fallback = True

    def fallback_split(self, name: str, constraints: Sequence[int]) -> None:
        """Set split knob ``name`` to the largest sizes within ``constraints`` (one per output
        axis, innermost last; ``-1``: no limit), each dividing what the inner ones leave.

        Examples
        --------
        >>> cfg = FallbackConfigEntity()
        >>> _ = cfg.define_split("tile", 128, num_outputs=3)
        >>> cfg.fallback_split("tile", [-1, 8, 4])
        >>> cfg["tile"].size
        [4, 8, 4]
        """
        space = self.space_map.get(name)
        if not isinstance(space, SplitSpace) or len(constraints) != space.num_output:
            raise TVMValueError(
                f"fallback_split({name!r}, {list(constraints)}): expected a split knob and one "
                "constraint per output axis"
            )
        entity = self._entity_map[name]
        left = space.product
        for i in reversed(range(space.num_output)):
            limit = math.inf if constraints[i] == -1 else constraints[i]
            fits = [f for f in get_factors(left) if f <= limit]
            if not fits:
                raise TVMValueError(f"fallback_split: no size of {left} fits {constraints[i]}")
            entity.size[i] = fits[-1]
            left //= fits[-1]

    def __setitem__(self, name: str, entity: Any) -> None:
        """Set the entity of knob ``name``."""
        self._entity_map[name] = entity

    def __repr__(self) -> str:
        body = ", ".join(f"{k!r}: {v}" for k, v in self._entity_map.items())
        return f"[{body}],{self.code_hash}"
