"""TVM v0.18's ``export_model_library_format([factory1, factory2], "lib.tar")``: several models
in one archive, each under its ``mod_name``; their C links into one program (symbols prefixed
``tvmgen_<mod>_``) whose outputs match numpy; a host-built graph factory's C goes in too.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tarfile
from pathlib import Path

import numpy as np
import pytest

import pytvm as tvm
from pytvm import relay
from pytvm.micro.model_library_format import UnsupportedInModelLibraryFormatError
from pytvm.relay.backend import Executor, Runtime

AOT = Executor("aot", {"interface-api": "c", "unpacked-api": True})

MAIN = r"""
#include <stdio.h>
#include "tvmgen_double.h"
#include "tvmgen_square.h"
int main(void) {
  float x[4] = {1.0f, -2.0f, 3.0f, 0.5f}, d[4], s[4];
  struct tvmgen_double_inputs di = {.x = x};
  struct tvmgen_double_outputs do_ = {.output = d};
  struct tvmgen_square_inputs si = {.x = x};
  struct tvmgen_square_outputs so = {.output = s};
  if (tvmgen_double_run(&di, &do_) != 0 || tvmgen_square_run(&si, &so) != 0) return 1;
  for (int i = 0; i < 4; ++i) printf("%g %g\n", (double)d[i], (double)s[i]);
  return 0;
}
"""


def _model(op: str) -> relay.IRModule:
    x = relay.var("x", shape=(4,), dtype="float32")
    body = relay.add(x, x) if op == "double" else relay.multiply(x, x)
    return relay.IRModule.from_expr(relay.Function([x], body))


def _build(op: str, executor: Executor = AOT) -> object:
    return relay.build(_model(op), "c", executor=executor, runtime=Runtime("crt"), mod_name=op)


def test_two_models_in_one_archive_link_into_one_program(tmp_path: Path) -> None:
    tar = tvm.micro.export_model_library_format(
        [_build("double"), _build("square")], tmp_path / "lib.tar"
    )
    with tarfile.open(tar) as archive:
        names = set(archive.getnames())
        archive.extractall(tmp_path / "mlf", filter="data")
    for mod in ("double", "square"):
        assert f"./codegen/host/src/{mod}_lib0.c" in names
        assert f"./codegen/host/include/tvmgen_{mod}.h" in names
        assert f"./src/{mod}.relay" in names
    assert "./runtime" in names and "./src/relay.txt" not in names
    metadata = json.loads((tmp_path / "mlf" / "metadata.json").read_text())
    assert sorted(metadata["modules"]) == ["double", "square"]
    assert metadata["modules"]["square"]["model_name"] == "square"
    if shutil.which("cc") is None:
        pytest.skip("needs a C compiler (cc)")
    (tmp_path / "main.c").write_text(MAIN)
    sources = sorted(str(p) for p in (tmp_path / "mlf" / "codegen" / "host" / "src").glob("*.c"))
    exe = tmp_path / "two_models"
    subprocess.run(
        ["cc", "-std=gnu99", f"-I{tmp_path / 'mlf' / 'codegen' / 'host' / 'include'}",
         str(tmp_path / "main.c"), *sources, "-o", str(exe), "-lm"],
        check=True, timeout=120,
    )  # fmt: skip
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True, timeout=30)
    got = np.array([[float(v) for v in line.split()] for line in out.stdout.splitlines()])
    x = np.array([1.0, -2.0, 3.0, 0.5])
    np.testing.assert_allclose(got, np.stack([x + x, x * x], axis=1))


def test_several_models_need_distinct_names_and_factories(tmp_path: Path) -> None:
    with pytest.raises(UnsupportedInModelLibraryFormatError, match="unique names"):
        tvm.micro.export_model_library_format(
            [_build("double"), _build("double")], tmp_path / "a.tar"
        )
    a = tvm.te.placeholder((2,), name="a")
    kernels = tvm.build(tvm.te.create_schedule(tvm.te.compute((2,), lambda i: a[i] * 2).op), [a])
    with pytest.raises(UnsupportedInModelLibraryFormatError, match="executor factories"):
        tvm.micro.export_model_library_format([_build("double"), kernels], tmp_path / "b.tar")


def test_a_host_built_graph_factory_keeps_its_c(tmp_path: Path) -> None:
    graph = _build("square", Executor("graph"))
    tar = tvm.micro.export_model_library_format([graph, _build("double")], tmp_path / "g.tar")
    with tarfile.open(tar) as archive:
        source = archive.extractfile("./codegen/host/src/square_lib0.c")
        assert source is not None and graph.get_lib().get_source().encode() == source.read()  # type: ignore[attr-defined]
        assert "./executor-config/graph/square.graph" in archive.getnames()
        metadata = json.load(archive.extractfile("./metadata.json"))  # type: ignore[arg-type]
    assert metadata["modules"]["square"]["executors"] == ["graph"]
    assert metadata["modules"]["double"]["executors"] == ["aot"]


def test_templates_hold_the_crt_config_and_the_host_platform(tmp_path: Path) -> None:
    tar = tvm.micro.export_model_library_format(_build("double"), tmp_path / "t.tar")
    with tarfile.open(tar) as archive:
        platform = archive.extractfile("./templates/platform.c.template")
        assert platform is not None and b"TVMPlatformTimerStart" in platform.read()
        assert "./templates/crt_config.h.template" in archive.getnames()
