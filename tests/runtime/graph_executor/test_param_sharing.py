"""Weights are kept in one copy: a built factory shares the built weights, a loaded artifact's
parameters are views of the library's data, and export streams them to a file.
"""

from __future__ import annotations

import gc
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pytvm
from pytvm import graph, relay
from pytvm.ffi.errors import TVMError
from pytvm.runtime.graph_executor import (
    GraphExecutorFactory,
    GraphModule,
    load_param_dict,
    save_param_dict,
    save_param_dict_to_file,
)
from pytvm.runtime.graph_executor.params import write_param_dict

pytestmark = pytest.mark.needs_cc


def _dense_model(n: int) -> tuple[Any, dict[str, np.ndarray]]:
    x = relay.var("x", shape=(2, n), dtype="float32")
    w = relay.var("w", shape=(n, n), dtype="float32")
    b = relay.var("b", shape=(n,), dtype="float32")
    y = relay.nn.relu(relay.nn.bias_add(relay.nn.dense(x, w), b))
    rng = np.random.default_rng(0)
    params = {
        "w": rng.standard_normal((n, n)).astype("float32"),
        "b": rng.standard_normal(n).astype("float32"),
    }
    return pytvm.IRModule.from_expr(relay.Function([x, w, b], y)), params


def _reference(x: np.ndarray, params: dict[str, np.ndarray]) -> np.ndarray:
    out: np.ndarray = np.maximum(x @ params["w"].T + params["b"], 0.0)
    return out


def test_streamed_param_dict_is_byte_for_byte_save_param_dict(tmp_path: Path) -> None:
    params = {
        "a": np.arange(6, dtype="float32").reshape(2, 3),
        "b": pytvm.nd.array(np.arange(4, dtype="int64")),
        "s": np.float64(2.5),
        "t": np.arange(6, dtype=">i4").reshape(3, 2).T,  # big-endian, not contiguous
    }
    blob = save_param_dict(params)
    stream = io.BytesIO()
    assert write_param_dict(params, stream) == len(blob)
    assert stream.getvalue() == blob
    save_param_dict_to_file(params, tmp_path / "p.params")
    assert (tmp_path / "p.params").read_bytes() == blob
    back = load_param_dict(blob)
    np.testing.assert_array_equal(back["t"].numpy(), params["t"])
    np.testing.assert_array_equal(back["b"].numpy(), np.arange(4))


def test_views_of_param_bytes_are_read_only_and_keep_their_buffer() -> None:
    blob = save_param_dict({"w": np.arange(8, dtype="float32")})
    views = load_param_dict(memoryview(blob), copy=False)
    del blob
    gc.collect()
    w = views["w"]
    np.testing.assert_array_equal(w.numpy(), np.arange(8, dtype="float32"))
    with pytest.raises(TVMError, match="read-only"):
        w.copyfrom(np.zeros(8, "float32"))
    writable = load_param_dict(bytearray(save_param_dict({"w": np.ones(2, "float32")})), copy=False)
    writable["w"].copyfrom(np.full(2, 3.0, "float32"))
    np.testing.assert_array_equal(writable["w"].numpy(), [3.0, 3.0])


def test_built_factory_shares_its_weights_and_copies_writable_arrays() -> None:
    mod, params = _dense_model(64)
    lib = graph.build(mod, target="llvm", params=params)
    for value in lib.get_params().values():
        with pytest.raises(TVMError, match="read-only"):
            value.copyfrom(np.zeros(value.shape, value.dtype))
    # A factory made from writable arrays copies them: changing the array later changes nothing.
    mine = {name: value.numpy() for name, value in lib.get_params().items()}
    factory = GraphExecutorFactory(lib.get_graph_json(), mine, lib.get_lib())
    first = next(iter(mine))
    kept = mine[first].copy()
    mine[first][...] = 0
    np.testing.assert_array_equal(factory.get_params()[first].numpy(), kept)
    x = np.random.default_rng(1).standard_normal((2, 64)).astype("float32")
    m = GraphModule(factory["default"](pytvm.cpu()))
    m.set_input("x", x)
    m.run()
    np.testing.assert_allclose(m.get_output(0).numpy(), _reference(x, params), rtol=1e-4, atol=1e-4)


def test_loaded_artifact_params_are_views_of_the_library(tmp_path: Path) -> None:
    mod, params = _dense_model(64)
    path = tmp_path / "net.so"
    graph.build(mod, target="llvm", params=params).export_library(path)
    lib = pytvm.runtime.load_module(path)
    assert isinstance(lib, GraphExecutorFactory)
    loaded = lib.get_params()
    del lib
    gc.collect()  # the views keep the library loaded
    maps = Path("/proc/self/maps").read_text() if Path("/proc/self/maps").exists() else ""
    for value in loaded.values():
        with pytest.raises(TVMError, match="read-only"):
            value.copyfrom(np.zeros(value.shape, value.dtype))
        if maps:  # the data lies in the library's mapping: it was not copied
            ranges = [
                [int(v, 16) for v in line.split()[0].split("-")]
                for line in maps.splitlines()
                if line.rstrip().endswith(str(path.resolve()))
            ]
            assert any(lo <= value.data_ptr < hi for lo, hi in ranges)
    lib = pytvm.runtime.load_module(path)
    x = np.random.default_rng(2).standard_normal((2, 64)).astype("float32")
    m = GraphModule(lib["default"](pytvm.cpu()))
    m.set_input("x", x)
    m.run()
    np.testing.assert_allclose(m.get_output(0).numpy(), _reference(x, params), rtol=1e-4, atol=1e-4)


_PEAK_SCRIPT = """
import json, sys
sys.path.insert(0, {tests!r})
from runtime.graph_executor.test_param_sharing import _dense_model
from pytvm import graph
def high_water():
    status = open("/proc/self/status").read().split("VmHWM:")[1]
    return int(status.split()[0]) * 1024
mod, params = _dense_model({n})
lib = graph.build(mod, target="llvm", params=params)
open("/proc/self/clear_refs", "w").write("5")  # the peak restarts from what is resident now
before = high_water()
lib.export_library({out!r})
print(json.dumps({{"before": before, "after": high_water()}}))
"""


@pytest.mark.skipif(
    not Path("/proc/self/clear_refs").exists(), reason="needs Linux's resettable peak RSS"
)
def test_export_does_not_hold_another_copy_of_the_weights(tmp_path: Path) -> None:
    n = 4096  # a 64 MiB weight: large against the interpreter and the compiler
    script = _PEAK_SCRIPT.format(
        tests=str(Path(__file__).resolve().parents[2]), n=n, out=str(tmp_path / "big.so")
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=600, check=True
    )
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    weights = n * n * 4
    # Before, export serialised the parameters to bytes and copied them (about 1.2x the
    # weights more at its peak); streamed to a file, the peak grows by a small fraction.
    assert figures["after"] - figures["before"] < 0.25 * weights, figures
