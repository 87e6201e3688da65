"""Graph executor codegen: a fused ``main`` becomes TVM's graph JSON, parameters and kernels.

Inputs are ``null`` nodes named after the function's parameters; constants left in ``main``
(weights) become ``null`` nodes named ``p0``, ``p1``, ... whose values go to the parameter
dict; each call of a primitive function is a ``tvm_op`` node calling its kernel. Every node
output (entry) is then placed in memory by a planner (:mod:`pytvm.graph.memory_plan`).

A primitive function that only reshapes its one input (TVM's ``reshape_only``) compiles to
nothing: its node calls ``__nop`` and its output is a view of the input's memory (same
storage and offset; the input's buffer lives as long as the view is read).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..ffi.errors import TVMValueError
from ..runtime.graph_executor.graph_json import Graph, GraphNode, NodeEntry
from .expr import Call, Constant, Expr, Function, Tuple, TupleGetItem, Var
from .functor import post_order
from .memory_plan.lifetimes import PlannedEntry
from .transform.device_propagation import device_map
from .ty import TensorType, TupleType, Type

__all__ = ["GraphLayout", "layout_graph"]

_CPU = 1


@dataclass
class GraphLayout:
    """Nodes, entries and their lifetimes, before memory planning."""

    nodes: list[GraphNode] = field(default_factory=list)
    entry_types: list[TensorType] = field(default_factory=list)
    entry_devices: list[int] = field(default_factory=list)
    node_row_ptr: list[int] = field(default_factory=lambda: [0])
    heads: list[NodeEntry] = field(default_factory=list)
    params: dict[str, np.ndarray] = field(default_factory=dict)
    buffers: list[PlannedEntry] = field(default_factory=list)
    num_steps: int = 0
    #: Entries that are views of another entry's memory (a ``__nop`` reshape): eid -> eid.
    aliases: dict[int, int] = field(default_factory=dict)

    def add_node(self, node: GraphNode, types: list[TensorType], device: int) -> list[NodeEntry]:
        """Append ``node`` with outputs of ``types`` on ``device``; its entries."""
        nid = len(self.nodes)
        self.nodes.append(node)
        self.entry_types.extend(types)
        self.entry_devices.extend([device] * len(types))
        self.node_row_ptr.append(self.node_row_ptr[-1] + len(types))
        return [NodeEntry(nid, i) for i in range(len(types))]

    @property
    def entry_names(self) -> list[str]:
        """Each entry's node name (``name:i`` for output ``i > 0``)."""
        names = []
        for nid, node in enumerate(self.nodes):
            count = self.node_row_ptr[nid + 1] - self.node_row_ptr[nid]
            names += [node.name if i == 0 else f"{node.name}:{i}" for i in range(count)]
        return names

    def eid(self, entry: NodeEntry) -> int:
        """The entry id of ``entry``."""
        return self.node_row_ptr[entry.node_id] + entry.index

    def to_graph(self, storage: list[int], offset: list[int] | None) -> Graph:
        """The graph JSON's data with ``storage`` ids (and byte offsets) per entry; a view
        takes the storage (and offset) of the entry it views.
        """
        storage = list(storage)
        offset = None if offset is None else list(offset)
        for eid, root in self.aliases.items():
            storage[eid] = storage[root]
            if offset is not None:
                offset[eid] = offset[root]
        return Graph(
            nodes=tuple(self.nodes),
            arg_nodes=tuple(i for i, n in enumerate(self.nodes) if n.op == "null"),
            heads=tuple(self.heads),
            node_row_ptr=tuple(self.node_row_ptr),
            storage_id=tuple(storage),
            shape=tuple(t.shape for t in self.entry_types),
            dltype=tuple(t.dtype for t in self.entry_types),
            device_index=tuple(self.entry_devices),
            storage_offset=None if offset is None else tuple(offset),
        )


def _tensor_types(ty: Type, where: str) -> list[TensorType]:
    if isinstance(ty, TensorType):
        return [ty]
    out: list[TensorType] = []
    for f in ty.fields:
        if isinstance(f, TupleType):
            raise TVMValueError(f"{where}: nested tuples cannot be graph outputs")
        out.append(f)
    return out


#: Operators that only reinterpret the shape of row-major data.
_RESHAPES = frozenset({"reshape", "squeeze", "expand_dims"})


def _reshape_only(call: Call) -> bool:
    """Whether ``call`` applies a primitive function that only reshapes its single input."""
    func = call.op
    if not isinstance(func, Function) or len(func.params) != 1 or len(call.args) != 1:
        return False
    node: Expr = func.body
    while isinstance(node, Call) and isinstance(node.op, str) and node.op in _RESHAPES:
        node = node.args[0]
    source, result = func.params[0].type_annotation, func.body.checked_type
    return (
        node is func.params[0]
        and isinstance(source, TensorType)
        and isinstance(result, TensorType)
        and source.dtype == result.dtype
        and source.nbytes == result.nbytes
    )


def layout_graph(  # noqa: PLR0912, PLR0915
    main: Function, kernel_name: Callable[[Call, int], str], fallback_device: int = _CPU
) -> GraphLayout:
    """Nodes and entries of a fused ``main``; ``kernel_name(call, device_type)`` names (and may
    lower) the kernel of each primitive call. Devices come from the ``device_copy`` nodes
    (:func:`~pytvm.graph.transform.device_map`); a ``device_copy`` is a ``__copy`` node.
    """
    layout = GraphLayout()
    devices = device_map(main.body)

    def device(node: Expr) -> int:
        return devices.get(id(node), fallback_device)

    entries: dict[int, list[NodeEntry]] = {}
    names = {p.name for p in main.params}
    reads: dict[int, int] = {}  # eid -> last step reading it
    for param in main.params:  # as TVM: every parameter is an input, read or not, in order
        ty = param.type_annotation
        if not isinstance(ty, TensorType):
            raise TVMValueError(f"graph input {param.name} is a tuple; inputs must be tensors")
        entries[id(param)] = layout.add_node(GraphNode("null", param.name), [ty], device(param))
    node: Expr
    for node in post_order(main.body):
        if isinstance(node, Var):
            if id(node) not in entries:
                raise TVMValueError(f"graph codegen: {node.name} is no parameter of main")
        elif isinstance(node, Constant):
            name = f"p{len(layout.params)}"
            while name in names:
                name = "_" + name
            names.add(name)
            layout.params[name] = node.data
            entries[id(node)] = layout.add_node(
                GraphNode("null", name), [node.checked_type], device(node)
            )
        elif isinstance(node, Call):
            if node.op == "device_copy":
                kernel = "__copy"
            elif not isinstance(node.op, Function):
                raise TVMValueError(f"{node.op}: operator calls must be fused before graph codegen")
            elif _reshape_only(node) and device(node) == device(node.args[0]):
                kernel = "__nop"
            else:
                kernel = kernel_name(node, device(node))
            inputs = [e for a in node.args for e in entries[id(a)]]
            step = layout.num_steps
            layout.num_steps += 1
            for e in inputs:
                reads[layout.eid(e)] = step
            types = _tensor_types(node.checked_type, kernel)
            gnode = GraphNode(
                "tvm_op",
                node.name or kernel,
                tuple(inputs),
                kernel,
                len(inputs),
                len(types),
            )
            entries[id(node)] = layout.add_node(gnode, types, device(node))
            if kernel == "__nop":
                source = layout.eid(inputs[0])
                layout.aliases[layout.eid(entries[id(node)][0])] = layout.aliases.get(
                    source, source
                )
        elif isinstance(node, Tuple):
            entries[id(node)] = [e for f in node.fields for e in entries[id(f)]]
        else:
            assert isinstance(node, TupleGetItem)
            entries[id(node)] = [entries[id(node.tuple_value)][node.index]]
    layout.heads = entries[id(main.body)]
    heads = {layout.eid(e) for e in layout.heads}
    step_of: dict[int, int] = {}
    step = 0
    for nid, gnode in enumerate(layout.nodes):
        if gnode.op == "tvm_op":
            for i in range(gnode.num_outputs):
                step_of[layout.node_row_ptr[nid] + i] = step
            step += 1
    # A viewed entry lives while any view of it is read, and as long as the graph if a view is
    # an output; a view itself takes no memory of its own.
    for eid, root in layout.aliases.items():
        reads[root] = max(reads.get(root, -1), reads.get(eid, step_of[eid]))
        if eid in heads:
            heads.add(root)
    for eid, ty in enumerate(layout.entry_types):
        pinned = eid not in step_of or eid in heads
        start = step_of.get(eid, -1)
        if eid in layout.aliases:
            layout.buffers.append(
                PlannedEntry(eid, 0, layout.entry_devices[eid], start, start, True)
            )
            continue
        layout.buffers.append(
            PlannedEntry(
                eid, ty.nbytes, layout.entry_devices[eid], start, reads.get(eid, start), pinned
            )
        )
    return layout
