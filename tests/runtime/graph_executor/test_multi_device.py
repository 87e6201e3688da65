"""A graph split across the CPU and a second device type (``ext_dev``, a device API registered
from Python whose memory is one pool of host memory): storage lands on the device the graph's
``device_index`` names, ``__copy`` nodes move data between them, and kernels see where they run.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pytvm
from pytvm.contrib import graph_executor
from pytvm.driver import CompiledModule
from pytvm.runtime.graph_executor import GraphExecutor
from pytvm.testing import compile_c
from pytvm.testing.ext_device import HostPoolDeviceAPI, host_pool_ext_dev

pytestmark = pytest.mark.needs_cc

EXT = 12


@pytest.fixture
def ext_api() -> Iterator[HostPoolDeviceAPI]:
    with host_pool_ext_dev() as api:
        yield api


# A kernel for the second device: it refuses arrays that are not on ext_dev.
EXT_KERNEL = r"""
#include "pytvm/c_runtime_api.h"
#include "pytvm/c_backend_api.h"
#include "pytvm/dlpack.h"

TVM_DLL int ext_triple(TVMValue* args, int* codes, int n, TVMValue* ret, int* ret_code,
                       void* resource) {
  (void)codes; (void)ret; (void)resource;
  DLTensor* a = (DLTensor*)args[0].v_handle;
  DLTensor* b = (DLTensor*)args[1].v_handle;
  if (n != 2 || a->device.device_type != 12 || b->device.device_type != 12) {
    TVMAPISetLastError("ValueError: ext_triple runs on ext_dev arrays only");
    return -1;
  }
  const float* x = (const float*)((char*)a->data + a->byte_offset);
  float* y = (float*)((char*)b->data + b->byte_offset);
  for (int i = 0; i < 32; ++i) y[i] = 3.0f * x[i];
  *ret_code = kTVMNullptr;
  return 0;
}
"""


def _op(name: str, func: str, inputs: list[list[int]]) -> dict[str, Any]:
    attrs = {"func_name": func, "num_inputs": str(len(inputs)), "num_outputs": "1",
             "flatten_data": "0"}  # fmt: skip
    return {"op": "tvm_op", "name": name, "inputs": inputs, "attrs": attrs}


def _graph() -> str:
    """The graph: add (cpu) -> copy -> triple (ext_dev) -> copy -> relu (cpu)."""
    nodes = [
        {"op": "null", "name": "x", "inputs": []},
        _op("add", "k_add", [[0, 0, 0], [0, 0, 0]]),
        _op("to_ext", "__copy", [[1, 0, 0]]),
        _op("triple", "ext_triple", [[2, 0, 0]]),
        _op("to_cpu", "__copy", [[3, 0, 0]]),
        _op("relu", "k_relu", [[4, 0, 0]]),
    ]
    return json.dumps(
        {
            "nodes": nodes,
            "arg_nodes": [0],
            "heads": [[5, 0, 0]],
            "node_row_ptr": [0, 1, 2, 3, 4, 5, 6],
            "attrs": {
                "storage_id": ["list_int", [0, 1, 2, 3, 4, 1]],
                "shape": ["list_shape", [[4, 8]] * 6],
                "dltype": ["list_str", ["float32"] * 6],
                "device_index": ["list_int", [1, 1, EXT, EXT, 1, 1]],
            },
        }
    )


def test_graph_runs_across_cpu_and_ext_dev(
    ext_api: HostPoolDeviceAPI, kernel_lib: CompiledModule, tmp_path: Path
) -> None:
    ext_lib = pytvm.runtime.load_module(compile_c(EXT_KERNEL, tmp_path, "ext"))
    ext_lib.import_module(kernel_lib)
    m = graph_executor.create(_graph(), ext_lib, [pytvm.cpu(), pytvm.ext_dev()])
    x = np.linspace(-2, 2, 32, dtype="float32").reshape(4, 8)
    m.run(x=x)
    np.testing.assert_allclose(m.get_output(0).numpy(), np.maximum(6 * x, 0), rtol=1e-6)
    ex = m.module
    assert isinstance(ex, GraphExecutor)
    placed = {sid: (b.device, ext_api.owns(b.data_ptr)) for sid, b in ex.storage.buffers.items()}
    cpu, ext = pytvm.cpu(), pytvm.ext_dev()
    assert placed == {
        0: (cpu, False),
        1: (cpu, False),
        2: (ext, True),
        3: (ext, True),
        4: (cpu, False),
    }
    assert ext_api.copies == [(1, EXT), (EXT, 1)]  # the two __copy nodes, nothing else
    assert [(s.func_name, s.row >= 0) for s in ex.plan.steps] == [
        ("k_add", True),
        ("__copy", False),
        ("ext_triple", True),
        ("__copy", False),
        ("k_relu", True),
    ]


def test_a_device_type_without_a_device_is_named(
    ext_api: HostPoolDeviceAPI, kernel_lib: CompiledModule, tmp_path: Path
) -> None:
    ext_lib = pytvm.runtime.load_module(compile_c(EXT_KERNEL, tmp_path, "ext"))
    ext_lib.import_module(kernel_lib)
    with pytest.raises(
        ValueError,
        match=r"graph node 'to_ext' \(entry 2, storage 2\) is placed on device type 12 \(ext_dev\)"
        r" but the executor was given only cpu\(0\)",
    ):
        graph_executor.create(_graph(), ext_lib, pytvm.cpu())
