"""TVM's graph JSON (the graph executor's input), parsed and checked into frozen dataclasses.

The schema, as TVM's graph executor codegen writes it::

    {"nodes": [{"op": "null" | "tvm_op", "name": str, "inputs": [[nid, index, version], ...],
                "attrs": {"func_name": str, "num_inputs": "2", "num_outputs": "1",
                          "flatten_data": "0"}}, ...],
     "arg_nodes": [nid, ...], "heads": [[nid, index, version], ...],
     "node_row_ptr": [0, ...],
     "attrs": {"storage_id": ["list_int", [...]], "shape": ["list_shape", [[...], ...]],
               "dltype": ["list_str", [...]], "device_index": ["list_int", [...]]}}

Node ``i`` owns the entries ``node_row_ptr[i] .. node_row_ptr[i + 1] - 1`` (one per output); the
``attrs`` lists have one item per entry. Every inconsistency is a ``TVMValueError`` that names the
node (and entry) it is about.

Examples
--------
>>> g = parse_graph_json(
...     '{"nodes": [{"op": "null", "name": "x", "inputs": []}], "arg_nodes": [0],'
...     ' "heads": [[0, 0, 0]], "node_row_ptr": [0, 1], "attrs": {"storage_id": ["list_int", [0]],'
...     ' "shape": ["list_shape", [[2, 3]]], "dltype": ["list_str", ["float32"]]}}'
... )
>>> g.nodes[0].name, g.shape[0], g.input_names
('x', (2, 3), ('x',))
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ...ffi.dtype import DataType
from ...ffi.errors import TVMValueError

__all__ = ["Graph", "GraphNode", "NodeEntry", "parse_graph_json"]

_TOP_KEYS = frozenset({"nodes", "arg_nodes", "heads", "node_row_ptr", "attrs"})
_OP_ATTRS = ("func_name", "num_inputs", "num_outputs", "flatten_data")
_TYPED = 2  # a graph attribute is [type name, values]
_SHOWN = 8  # items of a bad list shown in a message


@dataclass(frozen=True, slots=True)
class NodeEntry:
    """Output ``index`` of node ``node_id`` (``version`` is kept, unused, as in TVM)."""

    node_id: int
    index: int
    version: int = 0


@dataclass(frozen=True, slots=True)
class GraphNode:
    """One node: an input (``op == "null"``) or a call of ``func_name`` (``op == "tvm_op"``)."""

    op: str
    name: str
    inputs: tuple[NodeEntry, ...] = ()
    func_name: str = ""
    num_inputs: int = 0
    num_outputs: int = 1
    flatten_data: bool = False
    #: Attributes beyond the four of a ``tvm_op`` (e.g. ``hash``), as ``(key, value)`` pairs.
    extra_attrs: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        if self.op not in ("null", "tvm_op"):
            raise TVMValueError(
                f"graph node {self.name!r}: op {self.op!r} is neither 'null' nor 'tvm_op'"
            )
        if self.op == "null" and (self.inputs or self.num_outputs != 1):
            raise TVMValueError(
                f"graph node {self.name!r}: an input node (op 'null') has no inputs and one output"
            )
        if self.op == "tvm_op":
            if not self.func_name:
                raise TVMValueError(f"graph node {self.name!r}: empty func_name")
            if self.num_inputs != len(self.inputs):
                raise TVMValueError(
                    f"graph node {self.name!r}: num_inputs is {self.num_inputs} but it lists "
                    f"{len(self.inputs)} inputs"
                )
            if self.num_outputs < 1:
                raise TVMValueError(
                    f"graph node {self.name!r}: num_outputs is {self.num_outputs}, expected >= 1"
                )


@dataclass(frozen=True, slots=True)
class Graph:
    """A whole graph: nodes in execution order, the per-entry storage/shape/dtype/device lists."""

    nodes: tuple[GraphNode, ...]
    arg_nodes: tuple[int, ...]
    heads: tuple[NodeEntry, ...]
    node_row_ptr: tuple[int, ...]
    storage_id: tuple[int, ...]
    shape: tuple[tuple[int, ...], ...]
    dltype: tuple[str, ...]
    #: Device type of each entry; None when the graph has no ``device_index`` (one device).
    device_index: tuple[int, ...] | None = None
    #: Byte offset of each entry in its storage (pytvm's arena plans); None: all at 0.
    storage_offset: tuple[int, ...] | None = None
    _dtypes: tuple[DataType, ...] = field(default=(), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _check_rows(self)
        _check_edges(self)
        _check_entries(self)

    @property
    def num_entries(self) -> int:
        """Number of node entries (outputs of all nodes)."""
        return self.node_row_ptr[-1]

    def entry_id(self, node_id: int, index: int = 0) -> int:
        """The entry of output ``index`` of node ``node_id``."""
        return self.node_row_ptr[node_id] + index

    def node_of_entry(self, eid: int) -> int:
        """The node owning entry ``eid``."""
        lo, hi = 0, len(self.nodes) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.node_row_ptr[mid] <= eid:
                lo = mid
            else:
                hi = mid - 1
        return lo

    def dtype_of(self, eid: int) -> DataType:
        """The element type of entry ``eid``."""
        return self._dtypes[eid]

    def entry_nbytes(self, eid: int) -> int:
        """Bytes entry ``eid`` occupies (TVM's rounding: whole bytes per element and lane)."""
        count = 1
        for dim in self.shape[eid]:
            count *= dim
        return count * self._dtypes[eid].itemsize

    @property
    def input_names(self) -> tuple[str, ...]:
        """Names of the argument nodes, in ``arg_nodes`` order (the input indices)."""
        return tuple(self.nodes[nid].name for nid in self.arg_nodes)

    def to_json(self) -> str:
        """The graph as TVM's JSON (what :func:`parse_graph_json` reads back)."""
        nodes = []
        for node in self.nodes:
            item: dict[str, Any] = {
                "op": node.op,
                "name": node.name,
                "inputs": [[e.node_id, e.index, e.version] for e in node.inputs],
            }
            if node.op == "tvm_op":
                item["attrs"] = {
                    "func_name": node.func_name,
                    "num_inputs": str(node.num_inputs),
                    "num_outputs": str(node.num_outputs),
                    "flatten_data": str(int(node.flatten_data)),
                    **dict(node.extra_attrs),
                }
            nodes.append(item)
        attrs: dict[str, Any] = {
            "storage_id": ["list_int", list(self.storage_id)],
            "shape": ["list_shape", [list(s) for s in self.shape]],
            "dltype": ["list_str", list(self.dltype)],
        }
        if self.device_index is not None:
            attrs["device_index"] = ["list_int", list(self.device_index)]
        if self.storage_offset is not None:
            attrs["storage_offset"] = ["list_int", list(self.storage_offset)]
        return json.dumps(
            {
                "nodes": nodes,
                "arg_nodes": list(self.arg_nodes),
                "heads": [[e.node_id, e.index, e.version] for e in self.heads],
                "attrs": attrs,
                "node_row_ptr": list(self.node_row_ptr),
            }
        )


def _check_rows(g: Graph) -> None:
    n = len(g.nodes)
    if len(g.node_row_ptr) != n + 1 or (g.node_row_ptr and g.node_row_ptr[0] != 0):
        raise TVMValueError(
            f"graph JSON: node_row_ptr must start at 0 and have one item per node plus one "
            f"({n + 1}), got {len(g.node_row_ptr)} items starting "
            f"{list(g.node_row_ptr[:_SHOWN])}"
        )
    for nid, node in enumerate(g.nodes):
        rows = g.node_row_ptr[nid + 1] - g.node_row_ptr[nid]
        if rows != node.num_outputs:
            raise TVMValueError(
                f"graph node {node.name!r} (#{nid}): node_row_ptr gives it {rows} entries but it "
                f"has {node.num_outputs} outputs"
            )


def _check_entry(g: Graph, e: NodeEntry, where: str) -> None:
    if not 0 <= e.node_id < len(g.nodes):
        raise TVMValueError(f"{where}: node id {e.node_id} is not in 0..{len(g.nodes) - 1}")
    count = g.nodes[e.node_id].num_outputs
    if not 0 <= e.index < count:
        raise TVMValueError(
            f"{where}: output {e.index} of node {g.nodes[e.node_id].name!r}, which has {count}"
        )


def _check_edges(g: Graph) -> None:
    seen_args: dict[str, int] = {}
    for nid in g.arg_nodes:
        if not 0 <= nid < len(g.nodes):
            raise TVMValueError(
                f"graph JSON: arg_nodes lists node {nid}, not in 0..{len(g.nodes) - 1}"
            )
        node = g.nodes[nid]
        if node.op != "null":
            raise TVMValueError(f"graph node {node.name!r} (#{nid}) is in arg_nodes but is an op")
        if node.name in seen_args:
            raise TVMValueError(f"graph JSON: two argument nodes are named {node.name!r}")
        seen_args[node.name] = nid
    args = set(g.arg_nodes)
    for nid, node in enumerate(g.nodes):
        if node.op == "null" and nid not in args:
            raise TVMValueError(
                f"graph node {node.name!r} (#{nid}) is an input (op 'null') missing from arg_nodes"
            )
        for pos, e in enumerate(node.inputs):
            where = f"graph node {node.name!r} (#{nid}) input {pos}"
            _check_entry(g, e, where)
            if e.node_id >= nid:
                raise TVMValueError(
                    f"{where}: reads node #{e.node_id}, which does not run before it (nodes "
                    "must be in execution order)"
                )
    for pos, e in enumerate(g.heads):
        _check_entry(g, e, f"graph JSON: heads[{pos}]")


def _check_entries(g: Graph) -> None:
    count = g.num_entries
    lists: dict[str, tuple[Any, ...] | None] = {
        "storage_id": g.storage_id,
        "shape": g.shape,
        "dltype": g.dltype,
        "device_index": g.device_index,
        "storage_offset": g.storage_offset,
    }
    for key, values in lists.items():
        if values is not None and len(values) != count:
            raise TVMValueError(
                f"graph JSON: attrs.{key} has {len(values)} items, the graph has {count} entries"
            )
    dtypes = []
    for eid, text in enumerate(g.dltype):
        try:
            dt = DataType.parse(text)
        except (TypeError, ValueError):
            dt = None
        if dt is None or not (dt.bits * dt.lanes % 8 == 0 or dt.bits * dt.lanes in (1, 4)):
            raise TVMValueError(
                f"graph node {g.nodes[g.node_of_entry(eid)].name!r}: entry {eid} has unknown "
                f"dtype {text!r} (expected e.g. 'float32', 'int8', 'bool')"
            )
        dtypes.append(dt)
    object.__setattr__(g, "_dtypes", tuple(dtypes))
    device_of_storage: dict[int, tuple[int, int]] = {}
    for eid in range(count):
        where = f"graph node {g.nodes[g.node_of_entry(eid)].name!r} entry {eid}"
        if g.storage_id[eid] < 0:
            raise TVMValueError(f"{where}: storage_id {g.storage_id[eid]} is negative")
        if g.storage_offset is not None and g.storage_offset[eid] < 0:
            raise TVMValueError(f"{where}: storage_offset {g.storage_offset[eid]} is negative")
        if any(dim < 0 for dim in g.shape[eid]):
            raise TVMValueError(f"{where}: shape {g.shape[eid]} has a negative dimension")
        if g.device_index is None:
            continue
        if g.device_index[eid] < 0:
            raise TVMValueError(f"{where}: device_index {g.device_index[eid]} is negative")
        sid, dev = g.storage_id[eid], g.device_index[eid]
        first = device_of_storage.setdefault(sid, (dev, eid))
        if first[0] != dev:
            raise TVMValueError(
                f"{where}: storage {sid} is on device type {dev} here but on device type "
                f"{first[0]} for entry {first[1]}; one storage cannot span two devices"
            )


# ------------------------------------------------------------------------------ parsing


def _int(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TVMValueError(f"{where}: expected an integer, got {value!r}")
    return value


def _int_list(value: Any, where: str) -> tuple[int, ...]:
    if not isinstance(value, list):
        raise TVMValueError(f"{where}: expected a list of integers, got {type(value).__name__}")
    return tuple(_int(v, f"{where}[{i}]") for i, v in enumerate(value))


def _entry(value: Any, where: str) -> NodeEntry:
    if not isinstance(value, list) or len(value) not in (2, 3):
        raise TVMValueError(f"{where}: expected [node_id, index, version], got {value!r}")
    return NodeEntry(*_int_list(value, where))


def _attr_int(attrs: dict[str, Any], key: str, where: str) -> int:
    value = attrs[key]
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise TVMValueError(f"{where}: attrs.{key} must be an integer (as text), got {value!r}")


def _parse_node(nid: int, item: Any) -> GraphNode:
    if not isinstance(item, dict):
        raise TVMValueError(f"graph JSON: nodes[{nid}] is a {type(item).__name__}, not an object")
    name = item.get("name")
    where = f"graph node {name!r} (#{nid})"
    for key in ("op", "name", "inputs"):
        if key not in item:
            raise TVMValueError(f"{where}: missing key {key!r}")
    unknown = set(item) - {"op", "name", "inputs", "attrs", "attr", "control_deps"}
    if unknown:
        raise TVMValueError(f"{where}: unknown key(s) {sorted(unknown)}")
    if not isinstance(name, str) or not isinstance(item["op"], str):
        raise TVMValueError(f"{where}: 'op' and 'name' must be strings")
    if not isinstance(item["inputs"], list):
        raise TVMValueError(f"{where}: 'inputs' must be a list")
    inputs = tuple(_entry(e, f"{where} input {i}") for i, e in enumerate(item["inputs"]))
    attrs = item.get("attrs", item.get("attr", {}))
    if not isinstance(attrs, dict):
        raise TVMValueError(f"{where}: attrs must be an object, got {type(attrs).__name__}")
    if item["op"] != "tvm_op":
        return GraphNode(item["op"], name, inputs)
    missing = [key for key in _OP_ATTRS if key not in attrs]
    if missing:
        raise TVMValueError(f"{where}: a tvm_op needs attrs {', '.join(missing)}")
    if not isinstance(attrs["func_name"], str):
        raise TVMValueError(f"{where}: attrs.func_name must be a string")
    extra = tuple(sorted((str(k), str(v)) for k, v in attrs.items() if k not in _OP_ATTRS))
    return GraphNode(
        "tvm_op",
        name,
        inputs,
        attrs["func_name"],
        _attr_int(attrs, "num_inputs", where),
        _attr_int(attrs, "num_outputs", where),
        bool(_attr_int(attrs, "flatten_data", where)),
        extra,
    )


def _typed_list(attrs: dict[str, Any], key: str, kind: str) -> list[Any] | None:
    if key not in attrs:
        return None
    value = attrs[key]
    if not (isinstance(value, list) and len(value) == _TYPED and value[0] == kind):
        raise TVMValueError(f"graph JSON: attrs.{key} must be [{kind!r}, [...]], got {value!r:.80}")
    if not isinstance(value[1], list):
        raise TVMValueError(f"graph JSON: attrs.{key}[1] must be a list")
    return value[1]


def _parse_attrs(attrs: Any) -> dict[str, Any]:
    if not isinstance(attrs, dict):
        raise TVMValueError("graph JSON: 'attrs' must be an object")
    kinds = {"storage_id": "list_int", "shape": "list_shape", "dltype": "list_str"}
    out: dict[str, Any] = {}
    for key, kind in kinds.items():
        values = _typed_list(attrs, key, kind)
        if values is None:
            raise TVMValueError(f"graph JSON: attrs has no {key!r}")
        out[key] = values
    out["device_index"] = _typed_list(attrs, "device_index", "list_int")
    out["storage_offset"] = _typed_list(attrs, "storage_offset", "list_int")
    for key, value in attrs.items():  # TVM skips other list_int / size_t attributes
        if key not in (*kinds, "device_index", "storage_offset") and not (
            isinstance(value, list) and len(value) == _TYPED and value[0] in ("list_int", "size_t")
        ):
            raise TVMValueError(f"graph JSON: unknown graph attribute {key!r}: {value!r:.80}")
    return out


def parse_graph_json(text: str | bytes) -> Graph:
    """Parse and check TVM's graph JSON; ``TVMValueError`` naming the node at fault otherwise."""
    try:
        doc = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise TVMValueError(f"graph JSON does not parse: {err}") from None
    if not isinstance(doc, dict):
        raise TVMValueError(f"graph JSON must be an object, got {type(doc).__name__}")
    missing = sorted(_TOP_KEYS - set(doc))
    if missing:
        raise TVMValueError(f"graph JSON: missing key(s) {', '.join(missing)}")
    unknown = sorted(set(doc) - _TOP_KEYS - {"metadata"})
    if unknown:
        raise TVMValueError(f"graph JSON: unknown key(s) {', '.join(unknown)}")
    if not isinstance(doc["nodes"], list):
        raise TVMValueError("graph JSON: 'nodes' must be a list")
    if not isinstance(doc["heads"], list):
        raise TVMValueError("graph JSON: 'heads' must be a list")
    nodes = tuple(_parse_node(i, item) for i, item in enumerate(doc["nodes"]))
    attrs = _parse_attrs(doc["attrs"])
    shapes = tuple(
        _int_list(s, f"graph JSON: attrs.shape[{i}]") for i, s in enumerate(attrs["shape"])
    )
    for i, dtype in enumerate(attrs["dltype"]):
        if not isinstance(dtype, str):
            raise TVMValueError(f"graph JSON: attrs.dltype[{i}] must be a string, got {dtype!r}")
    device_index = attrs["device_index"]
    offsets = attrs["storage_offset"]
    return Graph(
        nodes=nodes,
        arg_nodes=_int_list(doc["arg_nodes"], "graph JSON: arg_nodes"),
        heads=tuple(_entry(e, f"graph JSON: heads[{i}]") for i, e in enumerate(doc["heads"])),
        node_row_ptr=_int_list(doc["node_row_ptr"], "graph JSON: node_row_ptr"),
        storage_id=_int_list(attrs["storage_id"], "graph JSON: attrs.storage_id"),
        shape=shapes,
        dltype=tuple(attrs["dltype"]),
        device_index=(
            None if device_index is None else _int_list(device_index, "graph JSON: device_index")
        ),
        storage_offset=(
            None if offsets is None else _int_list(offsets, "graph JSON: storage_offset")
        ),
    )
