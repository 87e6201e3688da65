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
import random
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

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

#: Annotation codes of ``ConfigEntity.get_flatten_feature`` (TVM's numbering).
_ANN_CODES = {
    name: i
    for i, name in enumerate(
        ("none", "vec", "unroll", "blockIdx.x", "blockIdx.y", "blockIdx.z", "threadIdx.x",
         "threadIdx.y", "threadIdx.z", "vthread", "fuse")
    )
}  # fmt: skip


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
        self._shared_filter: Callable[[Any], bool] | None = None
        self._valid: tuple[bool, ...] | None = None

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

    def multi_filter(self, filter: Callable[[Any], bool]) -> None:
        """Keep only the points whose entities (``{knob name: entity}``) satisfy ``filter``.

        Unlike a knob's own ``filter=``, this one relates several knobs. The index range stays
        the knobs' full product (``range_length``); ``len(space)`` counts the points kept, and
        ``get`` of a filtered-out index raises. Walk such a space with ``is_index_valid``,
        ``get_next_index`` and ``get_rand_index``. Only a space that collects knobs keeps it.

        Examples
        --------
        >>> cfg = ConfigSpace()
        >>> _ = cfg.define_split("tile_x", 16, num_outputs=2)
        >>> _ = cfg.define_split("tile_y", 16, num_outputs=2)
        >>> cfg.multi_filter(lambda e: e["tile_x"].size[1] * e["tile_y"].size[1] <= 4)
        >>> len(cfg), cfg.range_length
        (6, 25)
        """
        if not callable(filter):
            raise TVMValueError(f"multi_filter: {filter!r} is not a function of the entities")
        if self._collect:
            self._shared_filter = filter
            self._valid = None

    def _validity(self) -> tuple[bool, ...]:
        if self._valid is None:
            keep = self._shared_filter
            assert keep is not None
            self._valid = tuple(bool(keep(self._entities_of(i))) for i in range(self.range_length))
        return self._valid

    def _check_index(self, index: int, what: str) -> None:
        if not 0 <= index < self.range_length:
            raise TVMIndexError(
                f"{what}: index {index} out of range; the space has indices "
                f"0..{self.range_length - 1}"
            )

    def is_index_valid(self, index: int) -> bool:
        """Whether point ``index`` (in ``0..range_length-1``) satisfies the multi filter."""
        self._check_index(index, "is_index_valid")
        return self._shared_filter is None or self._validity()[index]

    @property
    def dims(self) -> list[int]:
        """The size of each knob's space, in declaration order."""
        return [len(s) for s in self.space_map.values()]

    def subrange_length(self, start: int, end: int) -> int:
        """The number of valid points with an index in ``[start, end)``."""
        if not 0 <= start <= end <= self.range_length:
            raise TVMIndexError(
                f"subrange_length({start}, {end}): expected 0 <= start <= end <= "
                f"{self.range_length}"
            )
        if self._shared_filter is None:
            return end - start
        return sum(self._validity()[start:end])

    def get_rand_index(
        self, start: int | None = None, end: int | None = None, to_exclude: Any = None
    ) -> int:
        """A random valid index in ``[start, end)`` not in ``to_exclude``; raises when there is
        none.
        """
        lo = 0 if start is None else start
        hi = self.range_length if end is None else end
        if not 0 <= lo < hi <= self.range_length:
            raise TVMIndexError(
                f"get_rand_index: range [{lo}, {hi}) is empty or outside 0..{self.range_length}"
            )
        exclude = set(to_exclude) if to_exclude is not None else set()
        for _ in range(64):  # rejection sampling while most of the range is acceptable
            index = random.randrange(lo, hi)
            if index not in exclude and self.is_index_valid(index):
                return index
        rest = [i for i in range(lo, hi) if i not in exclude and self.is_index_valid(i)]
        if not rest:
            raise TVMValueError(
                f"get_rand_index: no valid index in [{lo}, {hi}) outside the {len(exclude)} "
                "excluded"
            )
        return random.choice(rest)

    def get_next_index(
        self, index: int, n: int = 1, start: int | None = None, end: int | None = None
    ) -> int | None:
        """The ``n``-th valid index after ``index`` (before it when ``n < 0``) within
        ``[start, end)``, or None past the range.
        """
        if n == 0:
            raise TVMValueError("get_next_index: n must not be 0")
        lo = 0 if start is None else start
        hi = self.range_length if end is None else end
        step = 1 if n > 0 else -1
        left = abs(n)
        while left:
            index += step
            if not lo <= index < hi:
                return None
            if self.is_index_valid(index):
                left -= 1
        return index

    def point2knob(self, point: int) -> list[int]:
        """The knob indices of point ``point`` (the first knob varies fastest)."""
        knob = []
        for dim in self.dims:
            knob.append(point % dim)
            point //= dim
        return knob

    def knob2point(self, knob: Sequence[int]) -> int:
        """The point of knob indices ``knob`` (inverse of :meth:`point2knob`)."""
        point, stride = 0, 1
        for k, dim in zip(knob, self.dims, strict=False):
            point += int(k) * stride
            stride *= dim
        return point

    def sample_ints(self, m: int) -> np.ndarray:
        """``m`` distinct valid indices at random (works past 2**32 points, unlike numpy)."""
        if not 0 <= m <= len(self):
            raise TVMValueError(f"sample_ints({m}): the space has {len(self)} valid points")
        if m * 2 > len(self):
            valid = [i for i in range(self.range_length) if self.is_index_valid(i)]
            return np.array(random.sample(valid, m), dtype=np.int64)
        seen: set[int] = set()
        while len(seen) < m:
            index = random.randrange(self.range_length)
            if self.is_index_valid(index):
                seen.add(index)
        return np.fromiter(seen, np.int64, len(seen))

    def random_walk(self, point: int) -> int:
        """A valid neighbour of ``point``: one knob moved to another of its values."""
        old = self.point2knob(point)
        movable = [i for i, d in enumerate(self.dims) if d > 1]
        for _ in range(64):
            if not movable:
                break
            knob = list(old)
            axis = random.choice(movable)
            knob[axis] = random.choice([v for v in range(self.dims[axis]) if v != old[axis]])
            new = self.knob2point(knob)
            if self.is_index_valid(new):
                return new
        neighbours = [
            self.knob2point([*old[:i], v, *old[i + 1 :]])
            for i in movable
            for v in range(self.dims[i])
            if v != old[i]
        ]
        neighbours = [p for p in neighbours if self.is_index_valid(p)]
        if not neighbours:
            raise TVMValueError(f"random_walk: point {point} has no valid neighbour")
        return random.choice(neighbours)

    def _add_new_transform(
        self, space_class: Any, name: str, axes: Sequence[Any], policy: str, **kwargs: Any
    ) -> list[Axis]:
        if self._collect and not (self.is_fallback and name in self._entity_map):
            self._valid = None
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
        """The number of valid points (``range_length`` unless a multi filter is set)."""
        if self._shared_filter is None:
            return self.range_length
        return sum(self._validity())

    def _entities_of(self, index: int) -> OrderedDict[str, Any]:
        entities: OrderedDict[str, Any] = OrderedDict()
        rest = index
        for name, space in self.space_map.items():
            entities[name] = space[rest % len(space)]
            rest //= len(space)
        return entities

    def get(self, index: int) -> ConfigEntity:
        """The point ``index`` of the space (the first knob varies fastest); raises for an
        index out of range or filtered out by the multi filter.
        """
        if not 0 <= index < self.range_length:
            raise TVMIndexError(
                f"config index {index} out of range; the space has {self.range_length} points"
            )
        if not self.is_index_valid(index):
            raise TVMIndexError(
                f"config index {index} does not satisfy the space's multi_filter; check "
                "is_index_valid(index) first"
            )
        return ConfigEntity(index, self.code_hash, self._entities_of(index), self._constraints)

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
        return (
            f"ConfigSpace (len={len(self)}, range_length={self.range_length}, space_map=\n{rows})"
        )


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

    def get_flatten_feature(self) -> np.ndarray:
        """The knob values as float32: split sizes, reorder permutations, annotation codes
        (TVM's numbering), other options' values (numbers; any other value counts 0).
        """
        fea: list[float] = []
        for v in self._entity_map.values():
            if isinstance(v, SplitEntity):
                fea.extend(float(x) for x in v.size)
            elif isinstance(v, ReorderEntity):
                fea.extend(float(x) for x in v.perm)
            elif isinstance(v, AnnotateEntity):
                fea.extend(float(_ANN_CODES.get(a, 0)) for a in v.anns)
            elif isinstance(v, OtherOptionEntity):
                val = v.val
                fea.append(float(val) if isinstance(val, int | float | np.number) else 0.0)
        return np.array(fea, dtype=np.float32)

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

    def fallback_with_reference_log(self, ref_log: Sequence[tuple[Any, Any]]) -> None:
        """Mimic the closest record of ``ref_log`` (pairs, e.g. ``tophub.load_reference_log``'s):
        the record whose split sizes' products (an outer ``-1`` left out) share the most factors
        with this space's split lengths wins;
        each split knob then takes its inner sizes (the outer one absorbing the rest, as
        :meth:`fallback_split` fits them) and every other knob its value. Nothing changes when
        no record has this space's split knobs.
        """
        names = [n for n, sp in self.space_map.items() if isinstance(sp, SplitSpace)]
        ours = [set(get_factors(self.space_map[n].product)) for n in names]  # type: ignore[attr-defined]
        best, best_score = None, 0.0
        for inp, _res in ref_log:
            cfg = inp.config
            try:
                sizes = [cfg[n].size for n in names]
            except (KeyError, TVMValueError, AttributeError):
                continue
            score = sum(
                len(f & set(get_factors(math.prod(int(x) for x in size if int(x) > 0)))) / len(f)
                for f, size in zip(ours, sizes, strict=True)
            )
            if score > best_score:
                best, best_score = cfg, score
        if best is None:
            return
        for n in names:
            self.fallback_split(n, [-1, *[int(x) for x in best[n].size[1:]]])
        for n, sp in self.space_map.items():
            if not isinstance(sp, SplitSpace) and n in getattr(best, "_entity_map", {}):
                self._entity_map[n] = best[n]

    def __setitem__(self, name: str, entity: Any) -> None:
        """Set the entity of knob ``name``."""
        self._entity_map[name] = entity

    def __repr__(self) -> str:
        body = ", ".join(f"{k!r}: {v}" for k, v in self._entity_map.items())
        return f"[{body}],{self.code_hash}"
