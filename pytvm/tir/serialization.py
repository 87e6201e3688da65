"""``save_json`` / ``load_json``: IR nodes (loop IR, tensor expressions) to JSON text and back.

The text is a graph, as TVM's is: ``{"root": i, "nodes": [...], "attrs": {...}}``; each node is
``{"type_key": "tir.Var", "py_class": "pytvm.tir.expr:Var", "attrs": {field: value}}`` and a
node used twice is stored once, so loading keeps sharing (one variable stays one object).
Field values are JSON numbers, strings, booleans and null, or tagged objects: ``{"ref": i}``
(a node), ``{"tuple": [...]}``, ``{"list": [...]}``, ``{"map": [[key, value], ...]}``,
``{"enum": "module:Class", "value": v}`` and ``{"op": name}`` (a call's operator).

Any frozen IR dataclass of pytvm is a node; loading finds its class among the loaded modules,
so load tensor expressions after importing ``pytvm.te``.

Examples
--------
>>> from pytvm import tir
>>> from pytvm.tir.serialization import load_json, save_json
>>> x = tir.Var("x")
>>> y = load_json(save_json(x * x + 1))
>>> print(y)
((x * x) + 1)
>>> y.a.a is y.a.b
True
"""

from __future__ import annotations

import dataclasses
import enum
import json
import sys
from collections.abc import Mapping
from typing import Any

from ..ffi.errors import TVMTypeError, TVMValueError
from . import expr as _expr  # noqa: F401 - the loop IR's node classes must be loaded to load them
from . import function as _function  # noqa: F401
from . import stmt as _stmt  # noqa: F401
from .intrinsic import Op

__all__ = ["load_json", "save_json"]

_FORMAT_VERSION = "pytvm-json-1"


def _class_path(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def _type_key(cls: type) -> str:
    """TVM's spelling of a node type: ``tir.Var``, ``te.Tensor``."""
    parts = cls.__module__.split(".")
    layer = parts[1] if len(parts) > 1 and parts[0] == "pytvm" else parts[0]
    return f"{layer}.{cls.__name__}"


def _is_node(value: Any) -> bool:
    return (
        dataclasses.is_dataclass(value)
        and not isinstance(value, type)
        and type(value).__module__.startswith("pytvm.")
    )


class _Writer:
    def __init__(self) -> None:
        self.nodes: list[dict[str, Any]] = []
        self.index: dict[int, int] = {}
        self.keep: list[Any] = []  # keeps ids stable while writing

    def node(self, obj: Any) -> int:
        found = self.index.get(id(obj))
        if found is not None:
            return found
        slot = len(self.nodes)
        self.index[id(obj)] = slot
        self.keep.append(obj)
        entry: dict[str, Any] = {
            "type_key": _type_key(type(obj)),
            "py_class": _class_path(type(obj)),
        }
        self.nodes.append(entry)
        entry["attrs"] = {
            f.name: self.value(getattr(obj, f.name), f"{type(obj).__name__}.{f.name}")
            for f in dataclasses.fields(obj)
        }
        return slot

    def value(self, v: Any, where: str) -> Any:  # noqa: PLR0911 - one case per value kind
        if v is None or (isinstance(v, (bool, int, float)) and not isinstance(v, enum.Enum)):
            return v
        if isinstance(v, Op):
            return {"op": v.name}
        if isinstance(v, str):
            return v
        if isinstance(v, enum.Enum):
            return {"enum": _class_path(type(v)), "value": self.value(v.value, where)}
        if _is_node(v):
            return {"ref": self.node(v)}
        if isinstance(v, tuple):
            return {"tuple": [self.value(x, where) for x in v]}
        if isinstance(v, list):
            return {"list": [self.value(x, where) for x in v]}
        if isinstance(v, Mapping):
            return {"map": [[self.value(k, where), self.value(x, where)] for k, x in v.items()]}
        raise TVMTypeError(
            f"save_json: cannot serialize {type(v).__name__} {v!r} (in {where}); nodes may hold "
            "IR nodes, numbers, strings, enums, tuples, lists and maps"
        )


def save_json(node: Any) -> str:
    """``node`` (an IR node or a container of them) as JSON text (TVM's ``ir.save_json``)."""
    writer = _Writer()
    root = writer.value(node, type(node).__name__)
    graph = {"root": root, "nodes": writer.nodes, "attrs": {"format": _FORMAT_VERSION}}
    return json.dumps(graph)


def _resolve(path: str) -> Any:
    module_name, _, qualname = path.partition(":")
    module = sys.modules.get(module_name)
    if module is None:
        raise TVMValueError(
            f"load_json: the class {path} lives in {module_name}, which is not loaded; import "
            f"{module_name.rpartition('.')[0] or module_name} before loading"
        )
    obj: Any = module
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            raise TVMValueError(f"load_json: no class {path} in this version of pytvm")
    return obj


class _JsonReader:
    def __init__(self, nodes: list[dict[str, Any]]) -> None:
        self.nodes = nodes
        self.built: dict[int, Any] = {}

    def node(self, slot: int) -> Any:
        if slot in self.built:
            return self.built[slot]
        if not 0 <= slot < len(self.nodes):
            raise TVMValueError(f"load_json: reference to node {slot} of {len(self.nodes)}")
        entry = self.nodes[slot]
        cls = _resolve(entry["py_class"])
        attrs = {k: self.value(v) for k, v in entry["attrs"].items()}
        fields = {f.name: f for f in dataclasses.fields(cls)}
        unknown = set(attrs) - set(fields)
        if unknown:
            raise TVMValueError(
                f"load_json: {entry['type_key']} has no field(s) {sorted(unknown)}; the text "
                "comes from another pytvm version"
            )
        obj = cls(**{k: v for k, v in attrs.items() if fields[k].init})
        for k, v in attrs.items():
            if not fields[k].init:
                object.__setattr__(obj, k, v)
        self.built[slot] = obj
        return obj

    def value(self, v: Any) -> Any:  # noqa: PLR0911 - one case per value kind
        if not isinstance(v, dict):
            return v
        if "ref" in v:
            return self.node(v["ref"])
        if "op" in v:
            return Op(v["op"])
        if "tuple" in v:
            return tuple(self.value(x) for x in v["tuple"])
        if "list" in v:
            return [self.value(x) for x in v["list"]]
        if "map" in v:
            return {self.value(k): self.value(x) for k, x in v["map"]}
        if "enum" in v:
            return _resolve(v["enum"])(self.value(v["value"]))
        raise TVMValueError(f"load_json: unknown value encoding {v!r}")


def load_json(json_str: str) -> Any:
    """The node saved as ``json_str`` by :func:`save_json` (TVM's ``ir.load_json``)."""
    try:
        graph = json.loads(json_str)
    except json.JSONDecodeError as err:
        raise TVMValueError(f"load_json: not JSON text ({err})") from err
    if not isinstance(graph, dict) or graph.get("attrs", {}).get("format") != _FORMAT_VERSION:
        raise TVMValueError(
            "load_json: the text was not written by pytvm's save_json "
            f"(expected attrs.format {_FORMAT_VERSION!r})"
        )
    return _JsonReader(graph["nodes"]).value(graph["root"])
