"""``GraphExecutor``: a module that runs a graph, with TVM's packed functions as its interface.

Its functions are the ones TVM's graph executor offers -- ``set_input``, ``get_input``,
``get_output``, ``get_num_outputs``, ``get_num_inputs``, ``get_input_index``, ``run``,
``run_from_inputs``, ``load_params``, ``share_params`` -- plus ``get_input_name``,
``get_input_info`` (a JSON text of the inputs' shapes and dtypes) and ``get_graph_json``. Being
packed functions of a module, they work the same through RPC: a server creates the executor
(global ``tvm.graph_executor.create``) and the client calls them remotely.

Unlike TVM, names that are not inputs are errors (in ``set_input`` and ``load_params``), and
``set_input`` checks the value's shape and dtype against the input's, naming both.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from ...ffi import Device, PackedFunc
from ...ffi.device import device as make_device
from ...ffi.dtype import dtype as make_dtype
from ...ffi.errors import TVMTypeError, TVMValueError
from ...ffi.function import PyFunction
from ...ffi.registry import register_func
from ..module import Module
from ..ndarray import NDArray, empty
from .graph_json import Graph, parse_graph_json
from .op_plan import OpPlan
from .params import load_param_dict, read_param_names
from .storage import Storage

__all__ = ["GraphExecutor", "devices_from_args"]


def devices_from_args(args: Sequence[Any], what: str) -> list[Device]:
    """Devices given as ``Device`` values or as (device_type, device_id) integer pairs."""
    devices: list[Device] = []
    items = list(args)
    while items:
        first = items.pop(0)
        if isinstance(first, Device):
            devices.append(first)
        elif isinstance(first, (str, int)) and not isinstance(first, bool):
            dev_id = items.pop(0) if isinstance(first, int) and items else 0
            if not isinstance(dev_id, int):
                raise TVMTypeError(f"{what}: device id after type {first} must be int")
            devices.append(make_device(first, dev_id))
        else:
            raise TVMTypeError(
                f"{what}: expected devices (Device, or device type and id), got "
                f"{type(first).__name__} {first!r}"
            )
    if not devices:
        raise TVMValueError(f"{what}: no device given")
    for dev in devices:
        if dev.is_remote:
            raise TVMValueError(
                f"{what}: {dev} is an RPC device but this executor would run here; load the "
                "library on the server (remote.load_module) and create the executor there"
            )
    return devices


def _shown(names: Sequence[str], limit: int = 20) -> str:
    """Up to ``limit`` names for a message."""
    more = " ..." if len(names) > limit else ""
    return ", ".join(repr(n) for n in names[:limit]) + more


class GraphExecutor(Module):
    """Runs ``graph_json``'s operators from ``lib`` on ``devices`` (TVM's ``GraphExecutor``).

    Examples
    --------
    >>> import numpy as np, pytvm
    >>> g = ('{"nodes": [{"op": "null", "name": "x", "inputs": []}], "arg_nodes": [0],'
    ...      ' "heads": [[0, 0, 0]], "node_row_ptr": [0, 1], "attrs": {"storage_id": ["list_int",'
    ...      ' [0]], "shape": ["list_shape", [[2]]], "dltype": ["list_str", ["float32"]]}}')
    >>> ex = GraphExecutor(g, Module.from_functions("empty", {}), [pytvm.cpu()])
    >>> ex["set_input"]("x", np.array([1, 2], "float32")); ex["run"]()
    >>> ex["get_output"](0).numpy().tolist()
    [1.0, 2.0]
    """

    kind: ClassVar[str] = "GraphExecutor"

    def __init__(self, graph_json: str | Graph, lib: Module, devices: Sequence[Device]) -> None:
        super().__init__()
        if not isinstance(lib, Module):
            raise TVMTypeError(f"graph executor: lib must be a Module, got {type(lib).__name__}")
        self.graph = graph_json if isinstance(graph_json, Graph) else parse_graph_json(graph_json)
        self._graph_json = graph_json if isinstance(graph_json, str) else self.graph.to_json()
        self.lib = lib
        self.devices = devices_from_args(devices, "graph executor")
        self.storage = Storage.allocate(self.graph, self.devices)
        self.entries: list[NDArray] = list(self.storage.entries)
        self.plan = OpPlan(self.graph, lib, self.entries)
        self.input_index = {name: i for i, name in enumerate(self.graph.input_names)}

    def _get_own_function(self, name: str) -> PackedFunc | None:
        # A new function per lookup, holding the executor (as TVM's closures hold the module);
        # the executor holds none of them, so dropping the last reference frees its memory.
        method = getattr(self, f"_fn_{name}", None)
        return PyFunction(method, name) if method is not None else None

    @property
    def type_key(self) -> str:
        """``"GraphExecutor"``."""
        return self.kind

    # ------------------------------------------------------------------ lookups

    def _index_of(self, key: Any, what: str) -> int:
        names = self.graph.input_names
        if isinstance(key, str):
            index = self.input_index.get(key)
            if index is None:
                raise TVMValueError(
                    f"{what}: the graph has no input {key!r}; inputs: {_shown(names)}"
                )
            return index
        if isinstance(key, bool) or not isinstance(key, (int, np.integer)):
            raise TVMTypeError(f"{what}: an input is named by str or int, got {key!r}")
        if not 0 <= key < len(names):
            raise TVMValueError(f"{what}: input index {key} is not in 0..{len(names) - 1}")
        return int(key)

    def input_entry(self, key: Any, what: str = "get_input") -> NDArray:
        """The array of input ``key`` (name or index)."""
        index = self._index_of(key, what)
        return self.entries[self.graph.entry_id(self.graph.arg_nodes[index])]

    def output_entry(self, index: Any) -> NDArray:
        """The array of output ``index``."""
        heads = self.graph.heads
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)):
            raise TVMTypeError(f"get_output: output index must be int, got {index!r}")
        if not 0 <= index < len(heads):
            raise TVMValueError(f"get_output: output {index} is not in 0..{len(heads) - 1}")
        head = heads[int(index)]
        return self.entries[self.graph.entry_id(head.node_id, head.index)]

    def set_input_value(self, key: Any, value: Any) -> None:
        """Copy ``value`` (NDArray, numpy array or array-like) into input ``key``."""
        index = self._index_of(key, "set_input")
        entry = self.entries[self.graph.entry_id(self.graph.arg_nodes[index])]
        if isinstance(value, NDArray):
            shape, dtype = value.shape, value.dtype
        else:
            value = np.asarray(value) if not isinstance(value, np.ndarray) else value
            shape, dtype = tuple(value.shape), str(make_dtype(value.dtype))
        if shape != entry.shape or dtype != entry.dtype:
            raise TVMValueError(
                f"set_input: input {self.graph.input_names[index]!r} expects shape "
                f"{entry.shape} {entry.dtype}, got {shape} {dtype}"
            )
        entry.copyfrom(value)

    # ------------------------------------------------------------------ packed functions

    def _fn_set_input(self, key: Any, value: Any) -> None:
        self.set_input_value(key, value)

    def _fn_get_input(self, key: Any) -> NDArray:
        return self.input_entry(key)

    def _fn_get_output(self, index: Any, out: NDArray | None = None) -> NDArray | None:
        entry = self.output_entry(index)
        if out is None:
            return entry
        if not isinstance(out, NDArray):
            raise TVMTypeError(f"get_output: out must be an NDArray, got {type(out).__name__}")
        if out.shape != entry.shape or out.dtype != entry.dtype:
            raise TVMValueError(
                f"get_output: output {index} is {entry.shape} {entry.dtype}, out is "
                f"{out.shape} {out.dtype}"
            )
        entry.copyto(out)
        return None

    def _fn_get_num_outputs(self) -> int:
        return len(self.graph.heads)

    def _fn_get_num_inputs(self) -> int:
        return len(self.graph.arg_nodes)

    def _fn_get_input_index(self, name: str) -> int:
        if not isinstance(name, str):
            raise TVMTypeError(f"get_input_index: expected an input name, got {name!r}")
        return self.input_index.get(name, -1)

    def _fn_get_input_name(self, index: int) -> str:
        return self.graph.input_names[self._index_of(index, "get_input_name")]

    def _fn_get_input_info(self) -> str:
        shapes, dtypes = {}, {}
        for name in self.graph.input_names:
            entry = self.input_entry(name)
            shapes[name], dtypes[name] = list(entry.shape), entry.dtype
        return json.dumps({"shape": shapes, "dtype": dtypes})

    def _fn_get_graph_json(self) -> str:
        return self._graph_json

    def _fn_run(self) -> None:
        self.plan.run()

    def _fn_run_from_inputs(self, device_type: int, device_id: int, *pairs: Any) -> None:
        if len(pairs) % 2:
            raise TVMValueError("run_from_inputs: expected (name or index, value) pairs")
        for key, value in zip(pairs[::2], pairs[1::2]):
            self.set_input_value(key, value)
        self.plan.run()
        host = Device(device_type, device_id)
        for index in range(len(self.graph.heads)):
            entry = self.output_entry(index)
            entry.copyto(empty(entry.shape, entry.data_type, host))

    def _fn_load_params(self, blob: bytes | bytearray) -> None:
        params = load_param_dict(bytes(blob))
        self.set_params(params)

    def set_params(self, params: dict[str, Any]) -> None:
        """Copy each ``{name: array}`` into the input of that name; unknown names are an error."""
        unknown = sorted(set(params) - set(self.input_index))
        if unknown:
            raise TVMValueError(
                f"load_params: {len(unknown)} parameter(s) are not inputs of the graph: "
                f"{_shown(unknown)}"
            )
        for name, value in params.items():
            self.set_input_value(name, value)

    def _fn_share_params(self, other: Module, blob: bytes | bytearray) -> None:
        if not isinstance(other, GraphExecutor):
            raise TVMTypeError(
                f"share_params: expected a GraphExecutor module, got {type(other).__name__}"
            )
        names = read_param_names(bytes(blob))
        unknown = sorted(n for n in names if n not in self.input_index)
        if unknown:
            raise TVMValueError(f"share_params: not inputs of the graph: {_shown(unknown)}")
        for name in names:
            mine, theirs = self.input_entry(name), other.input_entry(name, "share_params")
            if (mine.shape, mine.dtype, mine.device) != (theirs.shape, theirs.dtype, theirs.device):
                raise TVMValueError(
                    f"share_params: input {name!r} is {mine.shape} {mine.dtype} on {mine.device} "
                    f"here, {theirs.shape} {theirs.dtype} on {theirs.device} in the other executor"
                )
            self.entries[self.graph.entry_id(self.graph.arg_nodes[self.input_index[name]])] = theirs
        self.plan = OpPlan(self.graph, self.lib, self.entries)


def _create(graph_json: str, lib: Module, *devices: Any) -> GraphExecutor:
    """TVM's ``tvm.graph_executor.create(graph_json, lib, device...)`` (devices as ``Device``
    values or as device type / id pairs).
    """
    if not isinstance(graph_json, str):
        raise TVMTypeError(
            f"tvm.graph_executor.create: graph_json must be str, got {type(graph_json).__name__}"
        )
    if devices and isinstance(devices[0], PackedFunc):
        devices = devices[1:]  # TVM's optional linked-parameter lookup: nothing is linked here
    return GraphExecutor(graph_json, lib, devices_from_args(devices, "tvm.graph_executor.create"))


register_func("tvm.graph_executor.create", _create, override=True)
