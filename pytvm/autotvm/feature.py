"""Features of a configured kernel for AutoTVM's cost models (TVM's ``autotvm.feature``).

Three kinds, as TVM's:

- itervar features (:func:`get_itervar_feature`): per loop of the kernel, lowered by
  :func:`ana_lower` (the schedule's loop nest with every loop kept, extent-1 loops included,
  and loop kinds as annotations rather than applied), its ``_attr_`` (length, nest level,
  top-down and bottom-up extent products, a one-hot of TVM's 11 annotation kinds), ``_arith_``
  (floating-point adds, multiplies, divides directly inside it) and one row per buffer access
  site inside it (stride, mod, count, reuse, thread count, thread reuse; see
  ``pytvm.autotvm._touch_extractor``). Loops are in order of first appearance, access sites
  sorted by name.
- curve features (:func:`get_buffer_curve_sample_flatten`): for each buffer touched in the
  innermost loops, the reuse / count / top-down curves along the loop nest, sampled at
  ``sample_n`` points; invariant of the loop structure.
- knob features (:func:`get_config_feature`): the knob values of the configuration itself
  (TVM's ``ConfigEntity.get_flatten_feature``).

Fixed length (pytvm's rule; TVM pads its vectors at the end to the longest of a batch): the
flattened itervar vector has :data:`ITERVAR_SLOTS` loop slots of :data:`TOUCH_SLOTS` access
sites each (extra loops and sites are cut off, missing ones are zeros), and the curve vector
:data:`TOUCH_SLOTS` buffers, so one cost model trains across the configurations of a task and,
for transfer learning, across tasks.

Examples
--------
>>> from pytvm import te
>>> A = te.placeholder((64, 64), name="A")
>>> B = te.compute((64, 64), lambda i, j: A[i, j] * 2.0, name="B")
>>> s = te.create_schedule(B.op)
>>> fea = get_itervar_feature(s, [A, B])
>>> [row[0][1] for row in fea]
['i', 'j']
>>> get_itervar_feature_flatten(s, [A, B]).shape == (FLATTEN_LENGTH,)
True
"""

from __future__ import annotations

import copy
import math
import zlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..ffi.errors import TVMTypeError, TVMValueError
from ..te.lower_schedule import lower_schedule
from ..tir import stmt as S
from ._touch_extractor import ANNOTATIONS, ItervarFeature, TouchExtractor
from .task.knobs import AnnotateEntity, OtherOptionEntity, ReorderEntity, SplitEntity

__all__ = [
    "CURVE_SAMPLE_N",
    "FLATTEN_LENGTH",
    "ITERVAR_SLOTS",
    "TOUCH_SLOTS",
    "ana_lower",
    "flatten_itervar_feature",
    "get_buffer_curve_sample_flatten",
    "get_config_feature",
    "get_flatten_name",
    "get_itervar_feature",
    "get_itervar_feature_flatten",
    "other_option_feature",
]

#: Loops kept in a flattened itervar vector (the first ones in the kernel).
ITERVAR_SLOTS = 32
#: Access sites kept per loop (by name), and buffers kept in a curve vector.
TOUCH_SLOTS = 10
#: Sample points per curve in the cost model's curve features.
CURVE_SAMPLE_N = 20

_ATTR_NAMES = ["length", "nest_level", "topdown", "bottomup"] + [f"ann_{a}" for a in ANNOTATIONS]
_ARITH_NAMES = ["add", "mul", "div"]
_TOUCH_NAMES = ["stride", "mod", "count", "reuse", "T_count", "T_reuse"]
_LOOP_WIDTH = len(_ATTR_NAMES) + len(_ARITH_NAMES) + TOUCH_SLOTS * len(_TOUCH_NAMES)
#: Length of every :func:`get_itervar_feature_flatten` vector.
FLATTEN_LENGTH = ITERVAR_SLOTS * _LOOP_WIDTH

Row = list[list[Any]]


def ana_lower(sch: Any, args: Sequence[Any], binds: Any = None, simple_mode: bool = True) -> S.Stmt:
    """The loop nest of ``sch`` for analysis (TVM's ``ana_lower``): every loop kept, loop kinds
    left as annotations (nothing vectorized or unrolled), buffers not flattened (the extractor
    computes row-major strides itself).
    """
    if binds:
        raise TVMValueError("ana_lower: binds= is not supported by pytvm")
    del simple_mode  # TVM's flag; the statement is always returned
    return lower_schedule(sch, list(args)).body


def _trans(take_log: bool) -> Callable[[int], float]:
    if not take_log:
        return float
    return lambda x: -math.log2(-x + 1) if x < 0 else math.log2(x + 1)


def _rows(itervars: list[ItervarFeature], take_log: bool) -> list[Row]:
    trans = _trans(take_log)
    ret: list[Row] = []
    for fea in itervars:
        attr = [trans(fea.length), fea.nest_level, trans(fea.topdown_product)]
        attr += [trans(fea.bottomup_product)] + [
            float(i == fea.ann) for i in range(len(ANNOTATIONS))
        ]
        row: Row = [["_itervar_", fea.name], ["_attr_", *attr]]
        row.append(["_arith_", trans(fea.add_ct), trans(fea.mul_ct), trans(fea.div_ct)])
        for site in sorted(fea.touch_feature):
            p = fea.touch_feature[site]
            values = (p.stride, p.mod, p.count, p.reuse, p.thread_count, p.thread_reuse)
            row.append([site, *(trans(v) for v in values)])
        ret.append(row)
    return ret


def get_itervar_feature(sch: Any, args: Sequence[Any], take_log: bool = False) -> list[Row]:
    """Features of every loop of ``sch`` lowered with ``args`` (see the module).

    Each loop's row is ``[["_itervar_", name], ["_attr_", length, nest_level, topdown,
    bottomup, *one_hot], ["_arith_", add, mul, div], [site, stride, mod, count, reuse,
    thread_count, thread_reuse], ...]`` (TVM's layout; the loop variable as its name).
    ``take_log``: numbers become ``log2(x + 1)`` (``-log2(-x + 1)`` when negative).
    """
    return _rows(TouchExtractor().analyze(ana_lower(sch, args)), take_log)


def flatten_itervar_feature(fea: Sequence[Row]) -> np.ndarray:
    """:func:`get_itervar_feature`'s rows as one vector of :data:`FLATTEN_LENGTH` float32."""
    out = np.zeros((ITERVAR_SLOTS, _LOOP_WIDTH), dtype=np.float32)
    for i, row in enumerate(fea[:ITERVAR_SLOTS]):
        if len(row) < 3 or row[1][0] != "_attr_" or row[2][0] != "_arith_":  # noqa: PLR2004
            raise TVMValueError(
                f"flatten_itervar_feature: row {i} is {row!r}; expected get_itervar_feature's "
                "rows ([_itervar_, name], [_attr_, ...], [_arith_, ...], [site, ...]...)"
            )
        values = [*row[1][1:], *row[2][1:]]
        for pair in row[3 : 3 + TOUCH_SLOTS]:
            values.extend(pair[1:])
        out[i, : len(values)] = values
    return out.reshape(-1)


def get_itervar_feature_flatten(sch: Any, args: Sequence[Any], take_log: bool = True) -> np.ndarray:
    """:func:`get_itervar_feature` flattened to a fixed-length vector (see the module)."""
    return flatten_itervar_feature(get_itervar_feature(sch, args, take_log))


def get_flatten_name(fea: Sequence[Row] | str) -> list[str]:
    """The name of each entry of the flattened vector, ``f<k>.<loop>.<row>.<field>``.

    ``fea`` is :func:`get_itervar_feature`'s rows or a line of a tuning log (its kernel is
    instantiated under its target). Empty loop slots are named ``_pad<i>_``, empty access-site
    slots ``_site<j>_``.
    """
    if isinstance(fea, str):
        fea = _features_of_record(fea)
    names: list[str] = []
    for i in range(ITERVAR_SLOTS):
        row = fea[i] if i < len(fea) else None
        loop = str(row[0][1]) if row is not None else f"_pad{i}_"
        fields = [("_attr_", n) for n in _ATTR_NAMES] + [("_arith_", n) for n in _ARITH_NAMES]
        for j in range(TOUCH_SLOTS):
            has_site = row is not None and 3 + j < len(row)
            site = str(row[3 + j][0]) if has_site and row is not None else f"_site{j}_"
            fields += [(site, n) for n in _TOUCH_NAMES]
        base = len(names)
        names += [f"f{base + k}.{loop}.{key}.{n}" for k, (key, n) in enumerate(fields)]
    return names


def _features_of_record(line: str) -> list[Row]:
    from .record import decode

    decoded = decode(line)
    if decoded is None:
        raise TVMValueError(f"get_flatten_name: {line[:80]!r} is not an AutoTVM log line")
    inp, _ = decoded
    task = inp.task
    if getattr(task, "target", None) is None:  # decoded tasks have none: the record's target
        task = copy.copy(task)
        task.target = inp.target
    with inp.target:
        sch, args = task.instantiate(inp.config)
    return get_itervar_feature(sch, args)


def _raw_buffer_name(site: str) -> str:
    raw = site[: site.rfind("_")]  # 'A_1' -> 'A'
    return raw.split(".")[0]  # 'A.local' -> 'A'


def get_buffer_curve_sample_flatten(
    sch: Any, args: Sequence[Any], sample_n: int = 30
) -> np.ndarray:
    """Sampled reuse/count/top-down curves of the innermost loops' buffers (TVM's relation
    feature): ``TOUCH_SLOTS * 4 * sample_n * 2`` float32, buffers by name, missing ones zero.
    """
    if sample_n < 1:
        raise TVMValueError(f"get_buffer_curve_sample_flatten: sample_n={sample_n}; expected >= 1")
    itervars = TouchExtractor().analyze(ana_lower(sch, args))
    max_depth = max((f.nest_level for f in itervars), default=0)
    innermost: set[str] = set()
    added: set[str] = set()
    for fea in reversed(itervars):
        if fea.nest_level == max_depth:
            for site in fea.touch_feature:
                raw = _raw_buffer_name(site)
                if raw not in added:
                    innermost.add(site)
                    added.add(raw)
    curves: dict[str, list[list[float]]] = {k: [[0.0], [0.0], [0.0]] for k in innermost}
    for fea in itervars:
        for site, pat in fea.touch_feature.items():
            if site in innermost:
                reuse, count, topdown = curves[site]
                reuse.append(math.log2(max(pat.reuse, 1)))
                count.append(math.log2(max(pat.count, 1)))
                topdown.append(math.log2(max(fea.topdown_product, 1)))

    def sample(x: list[float], y: list[float]) -> list[float]:
        ret: list[float] = []
        for i in range(sample_n):
            j = max(k for k in range(len(x)) if i > x[k] - 1e-6)
            ret += [y[j], i - x[j]]
        return ret

    width = 4 * sample_n * 2
    out = np.zeros((TOUCH_SLOTS, width), dtype=np.float32)
    for slot, site in enumerate(sorted(innermost)[:TOUCH_SLOTS]):
        reuse, count, topdown = (sorted(c) for c in curves[site])
        row = sample(count, reuse) + sample(reuse, count)
        row += sample(count, topdown) + sample(topdown, count)
        out[slot] = row
    return out.reshape(-1)


_ANN_NUMBER = {"none": 0, "vec": 1, "unroll": 2, "fuse": 3}


def _option_value(value: Any) -> float:
    """A knob option as a number: itself when numeric, else a stable code of its text."""
    if isinstance(value, bool | int | float | np.integer | np.floating):
        return float(value)
    return float(zlib.crc32(str(value).encode()) % 1000)


def get_config_feature(config: Any) -> np.ndarray:
    """The knob values of ``config`` as float32 (TVM's ``ConfigEntity.get_flatten_feature``):
    split sizes, reorder permutations, a one-hot per annotation, other options' values.
    """
    entity_map = getattr(config, "_entity_map", None)
    if entity_map is None:
        raise TVMTypeError(f"get_config_feature: {config!r} is not a configuration entity")
    fea: list[float] = []
    for v in entity_map.values():
        if isinstance(v, SplitEntity):
            fea.extend(float(x) for x in v.size)
        elif isinstance(v, ReorderEntity):
            fea.extend(float(x) for x in v.perm)
        elif isinstance(v, AnnotateEntity):
            for ann in v.anns:
                one_hot = [0.0] * len(_ANN_NUMBER)
                if isinstance(ann, str) and ann in _ANN_NUMBER:
                    one_hot[_ANN_NUMBER[ann]] = 1.0
                fea.extend(one_hot)
        elif isinstance(v, OtherOptionEntity):
            fea.append(_option_value(v.val))
    return np.array(fea, dtype=np.float32)


def other_option_feature(config: Any) -> np.ndarray:
    """The values of ``config``'s ``define_knob`` options, as float32 (TVM appends them to the
    loop features: a knob that changes no loop still tells configurations apart).
    """
    options = config.get_other_option() if hasattr(config, "get_other_option") else {}
    return np.array([_option_value(v) for v in options.values()], dtype=np.float32)
