"""The executor's operator calls, prepared once so that ``run()`` does no per-call work.

Each ``tvm_op`` node becomes a step calling ``lib[func_name]`` with the arrays of its inputs then
its outputs. A compiled (packed C) function also gets a row in a C table -- function pointer,
resource handle, argument values and type codes -- and consecutive such rows run in one call of
the C loop in ``graph_run.c``; other functions (Python, apache-tvm libraries) and ``__copy``
between devices run from Python between those stretches. ``__nop`` nodes do nothing. While
``pytvm.trace()`` records, every step goes through Python, so each kernel call is a span.
"""

from __future__ import annotations

import ctypes
import functools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ...ffi import PackedFunc
from ...ffi import trace as _trace
from ...ffi.c_abi import TVMValue
from ...ffi.c_function import CFunction
from ...ffi.errors import TVMError, TVMValueError, format_error, parse_error
from ...ffi.host_library import runtime_library
from ...ffi.last_error import take_error
from ...ffi.type_index import TypeIndex
from ..module import Module
from ..ndarray import NDArray
from ._c_runner import GraphOp, runner_library
from .graph_json import Graph, GraphNode

__all__ = ["OpPlan", "OpStep"]

#: Symbols of a one-file artifact's data, which are never operators.
_RESERVED_PREFIX = "__pytvm_graph_"


@dataclass(frozen=True)
class OpStep:
    """One operator node, ready to run: ``call()`` runs it from Python."""

    node_id: int
    name: str
    func_name: str
    args: tuple[NDArray, ...]
    call: Callable[[], Any]
    #: Row in the C table, or -1 when the step runs from Python.
    row: int = -1


def node_error(step: OpStep, err: BaseException) -> TVMError:
    """``err`` as an error of the same kind whose message names the node and its function."""
    return parse_error(
        format_error(err, with_traceback=False), f"graph node {step.name!r} ({step.func_name})"
    )


def _c_function_address(func: CFunction) -> tuple[int, int]:
    """Function pointer and resource handle of a compiled packed function."""
    lib = runtime_library()
    handle = func.c_handle()
    try:
        faddr, resource = ctypes.c_void_p(), ctypes.c_void_p()
        if lib.PyTVMFuncGetCFunc(handle, ctypes.byref(faddr), ctypes.byref(resource)) != 0:
            raise take_error()
        return faddr.value or 0, resource.value or 0
    finally:
        lib.TVMFuncFree(handle)


def _flat(arr: NDArray) -> NDArray:
    """``arr`` seen as one dimension (a node with ``flatten_data``)."""
    return NDArray(
        arr.data_ptr, (arr.size,), arr.data_type, arr.device, owner=arr, byte_offset=arr.byte_offset
    )


def _copy(src: NDArray, dst: NDArray) -> None:
    src.copyto(dst)


def _lookup(lib: Module, node: GraphNode, nid: int) -> PackedFunc:
    where = f"graph node {node.name!r} (#{nid})"
    if node.func_name.startswith(_RESERVED_PREFIX):
        raise TVMValueError(f"{where}: {node.func_name!r} names artifact data, not a function")
    func = lib.get_function(node.func_name, query_imports=True, allow_missing=True)
    if func is None:
        raise TVMValueError(
            f"{where}: the library ({lib.type_key}) and its imports have no function "
            f"{node.func_name!r}"
        )
    return func


class OpPlan:
    """Every operator step of a graph over given entry arrays, and the C table that runs them."""

    def __init__(self, graph: Graph, lib: Module, entries: Sequence[NDArray]) -> None:
        runner = runner_library()
        self.steps: list[OpStep] = []
        rows: list[tuple[int, int, Any, Any, int]] = []
        self._keep: list[Any] = []
        for nid, node in enumerate(graph.nodes):
            if node.op != "tvm_op" or node.func_name == "__nop":
                continue
            args = [entries[graph.entry_id(e.node_id, e.index)] for e in node.inputs]
            args += [entries[graph.entry_id(nid, k)] for k in range(node.num_outputs)]
            if node.flatten_data:
                args = [_flat(a) for a in args]
            if node.func_name == "__copy":
                if len(args) != 2:  # noqa: PLR2004 - source and destination
                    raise TVMValueError(
                        f"graph node {node.name!r} (#{nid}): __copy takes one input and one "
                        f"output, got {len(args)} arrays"
                    )
                step = OpStep(
                    nid, node.name, "__copy", tuple(args), functools.partial(_copy, *args)
                )
                self.steps.append(step)
                continue
            func = _lookup(lib, node, nid)
            row = -1
            if runner is not None and isinstance(func, CFunction):
                faddr, resource = _c_function_address(func)
                values = (TVMValue * len(args))()
                for i, arr in enumerate(args):
                    values[i].v_handle = arr.dltensor_address
                codes = (ctypes.c_int * len(args))(*[TypeIndex.DL_TENSOR_PTR] * len(args))
                row = len(rows)
                rows.append((faddr, resource, values, codes, len(args)))
            call = functools.partial(func, *args)
            self.steps.append(OpStep(nid, node.name, node.func_name, tuple(args), call, row))
        self._keep.append(lib)  # the functions' code lives as long as the plan
        self._table = (GraphOp * max(len(rows), 1))()
        for i, (faddr, resource, values, codes, nargs) in enumerate(rows):
            self._table[i] = GraphOp(
                faddr, resource, ctypes.addressof(values), ctypes.addressof(codes), nargs, 0
            )
            self._keep += [values, codes]
        self._table_address = ctypes.addressof(self._table)
        self._runner = runner
        # Stretches of consecutive C rows as (first row, end row, first step); others: a step.
        self._program: list[tuple[int, int, int] | OpStep] = []
        for index, step in enumerate(self.steps):
            last = self._program[-1] if self._program else None
            if step.row < 0:
                self._program.append(step)
            elif isinstance(last, tuple) and last[1] == step.row:
                self._program[-1] = (last[0], step.row + 1, last[2])
            else:
                self._program.append((step.row, step.row + 1, index))

    @property
    def num_c_rows(self) -> int:
        """How many steps run from the C table."""
        return sum(1 for step in self.steps if step.row >= 0)

    def _fail(self, first_step: int, first_row: int, rc: int) -> TVMError:
        step = self.steps[first_step + (rc - 1 - first_row)]
        return node_error(step, take_error())

    def run(self) -> None:
        """Run every step in order."""
        if _trace.ON:
            self.run_steps(0, len(self.steps))
            return
        runner, table = self._runner, self._table_address
        for item in self._program:
            if isinstance(item, OpStep):
                try:
                    item.call()
                except Exception as err:
                    raise node_error(item, err) from err
                continue
            assert runner is not None
            rc = runner.PyTVMGraphRun(table, item[0], item[1])
            if rc != 0:
                raise self._fail(item[2], item[0], rc)

    def run_steps(self, begin: int, end: int) -> None:
        """Run steps ``begin .. end - 1`` one by one from Python."""
        for step in self.steps[begin:end]:
            try:
                step.call()
            except Exception as err:
                raise node_error(step, err) from err

    def run_timed(self) -> list[tuple[float, float]]:
        """Run every step in order; (start, seconds) of each step, starts on one clock."""
        out: list[tuple[float, float]] = []
        runner, table = self._runner, self._table_address
        now = runner.PyTVMGraphNow if runner is not None else time.perf_counter
        for item in self._program:
            if isinstance(item, OpStep):
                start = now()
                try:
                    item.call()
                except Exception as err:
                    raise node_error(item, err) from err
                out.append((start, now() - start))
                continue
            assert runner is not None
            count = item[1] - item[0]
            starts = (ctypes.c_double * (item[1]))()
            seconds = (ctypes.c_double * (item[1]))()
            rc = runner.PyTVMGraphRunTimed(table, item[0], item[1], starts, seconds)
            if rc != 0:
                raise self._fail(item[2], item[0], rc)
            out += [(starts[item[0] + k], seconds[item[0] + k]) for k in range(count)]
        return out
