"""The executor's memory: one buffer per storage id, and every node entry as a view into one.

A storage id's buffer is as large as the largest entry sharing it (in bytes; with pytvm's
``storage_offset`` attribute, an arena: entries at byte offsets, as large as the furthest end) and
lives on the device whose type the graph's ``device_index`` gives those entries (the first device
when the graph has no ``device_index``). Entries are arrays with their own shape and dtype over the
buffer's memory, so a kernel writing one entry writes the memory every entry of that id shares.

Examples
--------
>>> from pytvm.runtime.graph_executor.graph_json import parse_graph_json
>>> from pytvm.ffi import cpu
>>> g = parse_graph_json(
...     '{"nodes": [{"op": "null", "name": "x", "inputs": []}], "arg_nodes": [0],'
...     ' "heads": [[0, 0, 0]], "node_row_ptr": [0, 1], "attrs": {"storage_id": ["list_int", [0]],'
...     ' "shape": ["list_shape", [[2, 3]]], "dltype": ["list_str", ["float32"]]}}'
... )
>>> mem = Storage.allocate(g, [cpu(0)])
>>> mem.buffers[0].nbytes, mem.entries[0].shape
(24, (2, 3))
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ...ffi import Device
from ...ffi.errors import TVMValueError
from ..ndarray import NDArray, empty
from .graph_json import Graph

__all__ = ["Storage", "device_for_type"]


def device_for_type(devices: Sequence[Device], device_type: int, where: str) -> Device:
    """The first of ``devices`` whose (unmasked) type is ``device_type``."""
    for dev in devices:
        if dev.base_type == device_type:
            return dev
    given = ", ".join(str(d) for d in devices)
    raise TVMValueError(
        f"{where} is placed on device type {device_type} ({Device(device_type).device_name}) but "
        f"the executor was given only {given}; pass a device of that type too"
    )


@dataclass
class Storage:
    """The buffers by storage id and the entry views (indexed by entry id)."""

    buffers: dict[int, NDArray]
    entries: list[NDArray]

    @staticmethod
    def allocate(graph: Graph, devices: Sequence[Device]) -> Storage:
        """Allocate every storage id's buffer and make every entry's view."""
        sizes: dict[int, int] = {}
        placed: dict[int, Device] = {}
        for eid in range(graph.num_entries):
            sid = graph.storage_id[eid]
            end = graph.entry_nbytes(eid) + _offset(graph, eid)
            sizes[sid] = max(sizes.get(sid, 0), end)
            if sid not in placed:
                if graph.device_index is None:
                    placed[sid] = devices[0]
                else:
                    node = graph.nodes[graph.node_of_entry(eid)]
                    where = f"graph node {node.name!r} (entry {eid}, storage {sid})"
                    placed[sid] = device_for_type(devices, graph.device_index[eid], where)
        buffers = {sid: empty((sizes[sid],), "uint8", placed[sid]) for sid in sorted(sizes)}
        entries = [
            view(buffers[graph.storage_id[eid]], graph.shape[eid], graph, eid)
            for eid in range(graph.num_entries)
        ]
        return Storage(buffers, entries)


def view(buffer: NDArray, shape: tuple[int, ...], graph: Graph, eid: int) -> NDArray:
    """Entry ``eid`` (shape ``shape``, the graph's dtype) over ``buffer``'s memory.

    An arena offset moves the data pointer (``byte_offset`` stays the buffer's, normally 0:
    kernels built by TVM require it to be 0).
    """
    return NDArray(
        buffer.data_ptr + _offset(graph, eid),
        shape,
        graph.dtype_of(eid),
        buffer.device,
        owner=buffer,
        byte_offset=buffer.byte_offset,
    )


def _offset(graph: Graph, eid: int) -> int:
    return 0 if graph.storage_offset is None else graph.storage_offset[eid]
