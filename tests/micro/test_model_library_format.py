"""Model Library Format: TVM v0.18's layout and metadata keys, figures equal to the factory's,
TVM's parameter bytes, and a round trip through the reader; bad archives are refused.
"""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest

import pytvm
import pytvm.micro
from pytvm import relay
from pytvm.ffi.errors import TVMValueError
from pytvm.frontend import from_onnx
from pytvm.micro import export_model_library_format, read_model_library_format

TARGET = "c -mcpu=cortex-m4"


def _aot(model: Path, target: str = TARGET) -> Any:
    mod, params = from_onnx(onnx.load(model))
    return relay.build(
        mod,
        target=target,
        executor=relay.backend.Executor("aot", {"interface-api": "c", "unpacked-api": True}),
        runtime=relay.backend.Runtime("crt", {"system-lib": True}),
        params=params,
    )


@pytest.fixture(scope="module")
def factory(reference_models: dict[str, Path]) -> Any:
    return _aot(reference_models["cnn_small"])


@pytest.fixture(scope="module")
def archive(factory: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return export_model_library_format(factory, tmp_path_factory.mktemp("mlf") / "model.tar")


def _read(path: Path, member: str) -> bytes:
    with tarfile.open(path) as tar:
        f = tar.extractfile(f"./{member}")
        assert f is not None
        return f.read()


def test_archive_has_tvms_layout(archive: Path) -> None:
    with tarfile.open(archive) as tar:
        names = {m.name.removeprefix("./") for m in tar.getmembers() if m.isfile()}
    for path in (
        "metadata.json",
        "codegen/host/src/default_lib0.c",
        "codegen/host/src/default_lib1.c",
        "codegen/host/include/tvmgen_default.h",
        "parameters/default.params",
        "src/relay.txt",
        "runtime/include/pytvm/c_runtime_api.h",
        "runtime/include/pytvm_crt/crt.h",
        "runtime/src/crt/Makefile",
        "templates/crt_config.h.template",
    ):
        assert path in names, path
    assert not any("/tests/" in n for n in names)


def test_metadata_keys_and_figures_equal_the_factorys(archive: Path, factory: Any) -> None:
    meta = json.loads(_read(archive, "metadata.json"))
    assert meta["version"] == 7
    mod = meta["modules"]["default"]
    assert {"model_name", "export_datetime", "memory", "target", "executors", "style"} <= set(mod)
    assert mod["executors"] == ["aot"] and mod["style"] == "full-model"
    assert mod["target"] == [str(factory.target)]
    assert mod["external_dependencies"][0]["short_name"] == "tvm_standalone_crt"
    main = mod["memory"]["functions"]["main"][0]
    assert main["workspace_size_bytes"] == factory.workspace_bytes
    assert main["constants_size_bytes"] == factory.constant_bytes
    assert main["io_size_bytes"] == factory.io_bytes
    (name,) = main["inputs"]
    assert main["inputs"][name] == {
        "size": factory.inputs[0].nbytes,
        "dtype": "float32",
        "shape": list(factory.inputs[0].shape),
    }
    assert main["outputs"]["output"]["shape"] == [1, 10]
    ops = mod["memory"]["functions"]["operator_functions"]
    assert [f["function_name"] for f in ops] == [k.name for k in factory.kernels]
    assert [f["workspace"][0]["workspace_size_bytes"] for f in ops] == [
        k.scratch_bytes for k in factory.kernels
    ]


def test_sources_and_params_are_the_factorys(archive: Path, factory: Any) -> None:
    for name, text in factory.lib.sources.items():
        assert _read(archive, f"codegen/host/src/{name}").decode() == text
    params = pytvm.runtime.load_param_dict(_read(archive, "parameters/default.params"))
    assert sorted(params) == sorted(factory.params)
    for name, value in factory.params.items():
        np.testing.assert_array_equal(params[name].numpy(), value)


def test_reader_round_trip(archive: Path, factory: Any) -> None:
    mlf = read_model_library_format(archive)
    assert mlf.mod_name == "default"
    assert str(mlf.target) == str(factory.target)
    assert mlf.inputs == factory.inputs and mlf.outputs == factory.outputs
    assert (mlf.workspace_bytes, mlf.constant_bytes, mlf.io_bytes) == (
        factory.workspace_bytes,
        factory.constant_bytes,
        factory.io_bytes,
    )
    assert mlf.memory_plan == factory.memory_plan
    assert mlf.kernels == factory.kernels
    assert mlf.lib.sources == factory.lib.sources
    assert mlf.lib.headers == factory.lib.headers
    assert mlf.lib.cflags == factory.lib.cflags
    assert mlf.ir_text == factory.ir_text
    assert mlf.executor["name"] == "aot" and mlf.executor["options"]["unpacked-api"] is True


def test_graph_factory_for_a_c_target_writes_the_graph(
    reference_models: dict[str, Path], tmp_path: Path
) -> None:
    mod, params = from_onnx(onnx.load(reference_models["mlp"]))
    lib = pytvm.graph.build(mod, target=TARGET, params=params)
    path = export_model_library_format(lib, tmp_path / "graph.tar")
    meta = json.loads(_read(path, "metadata.json"))["modules"]["default"]
    assert meta["executors"] == ["graph"]
    assert meta["memory"]["sids"][0]["input_binding"] == "input"
    graph = json.loads(_read(path, "executor-config/graph/default.graph"))
    assert graph["nodes"][0]["name"] == "input"
    assert b"dense" in _read(path, "codegen/host/src/default_lib0.c")


def test_kernel_source_module_is_an_operator_archive(tmp_path: Path) -> None:
    n = pytvm.te.var("n")
    a = pytvm.te.placeholder((n,), name="A")
    b = pytvm.te.compute((n,), lambda i: a[i] + 1.0, name="B")
    s = pytvm.te.create_schedule(b.op)
    lib = pytvm.build(s, [a, b], target=TARGET, name="add_one")
    path = export_model_library_format(lib, tmp_path / "op.tar")
    meta = json.loads(_read(path, "metadata.json"))
    assert meta["style"] == "operator" and meta["executors"] == []
    assert "add_one" in _read(path, "codegen/host/src/lib0.c").decode()
    with pytest.raises(TVMValueError, match="operators"):
        read_model_library_format(path)


def _tar_with(tmp_path: Path, name: str, data: bytes, kind: bytes = tarfile.REGTYPE) -> Path:
    path = tmp_path / "bad.tar"
    with tarfile.open(path, "w") as tar:
        info = tarfile.TarInfo(name)
        info.type = kind
        info.size = len(data) if kind == tarfile.REGTYPE else 0
        if kind == tarfile.SYMTYPE:
            info.linkname = "/etc/passwd"
        tar.addfile(info, io.BytesIO(data) if kind == tarfile.REGTYPE else None)
    return path


def test_reader_refuses_bad_archives(tmp_path: Path) -> None:
    with pytest.raises(TVMValueError, match=r"no metadata\.json"):
        read_model_library_format(_tar_with(tmp_path, "hello.txt", b"hi"))
    with pytest.raises(TVMValueError, match="outside the archive"):
        read_model_library_format(_tar_with(tmp_path, "../../evil.txt", b"x"))
    with pytest.raises(TVMValueError, match="link"):
        read_model_library_format(_tar_with(tmp_path, "metadata.json", b"", tarfile.SYMTYPE))
    with pytest.raises(TVMValueError, match="version"):
        read_model_library_format(_tar_with(tmp_path, "metadata.json", b'{"version": 99}'))
    not_tar = tmp_path / "x.tar"
    not_tar.write_bytes(b"not a tar at all" * 64)
    with pytest.raises(TVMValueError, match="not a Model Library Format archive"):
        read_model_library_format(not_tar)


def test_export_refuses_what_it_cannot_hold(factory: Any, tmp_path: Path) -> None:
    with pytest.raises(pytvm.micro.UnsupportedInModelLibraryFormatError, match="one module"):
        export_model_library_format([factory, factory], tmp_path / "two.tar")
    with pytest.raises(TVMValueError, match=r"\.tar"):
        export_model_library_format(factory, tmp_path / "model.zip")
    with pytest.raises(pytvm.micro.UnsupportedInModelLibraryFormatError, match="dict"):
        export_model_library_format({}, tmp_path / "x.tar")


def test_standalone_crt_dir_is_the_crt_sources() -> None:
    crt = Path(pytvm.micro.get_standalone_crt_dir())
    assert (crt / "Makefile").is_file() and (crt / "include" / "pytvm_crt" / "crt.h").is_file()
