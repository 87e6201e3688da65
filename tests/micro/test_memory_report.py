"""Will it fit: measured sections against memory maps; mlp's weights are refused by an STM32F4
with the region and the bytes over, cnn_small fits; JSON maps; bad maps are refused.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import onnx
import pytest

from pytvm import relay
from pytvm.ffi.errors import TVMTypeError, TVMValueError
from pytvm.frontend import from_onnx
from pytvm.micro import (
    BUILTIN_MAPS,
    MemoryMapError,
    export_model_library_format,
    load_memory_map,
    memory_report,
)

pytestmark = pytest.mark.skipif(
    shutil.which("arm-none-eabi-gcc") is None,
    reason="arm-none-eabi-gcc is not installed (make mcu installs it)",
)


def _aot(model: Path) -> Any:
    mod, params = from_onnx(onnx.load(model))
    return relay.build(
        mod,
        target="c -mcpu=cortex-m4",
        executor=relay.backend.Executor("aot", {"interface-api": "c", "unpacked-api": True}),
        runtime=relay.backend.Runtime("crt", {"system-lib": True}),
        params=params,
    )


@pytest.fixture(scope="module")
def mlp(reference_models: dict[str, Path]) -> Any:
    return _aot(reference_models["mlp"])


@pytest.fixture(scope="module")
def cnn_small(reference_models: dict[str, Path]) -> Any:
    return _aot(reference_models["cnn_small"])


def test_mlp_is_refused_by_stm32f4_naming_region_and_bytes(mlp: Any) -> None:
    with pytest.raises(MemoryMapError) as err:
        memory_report(mlp, "stm32f4")
    message = str(err.value)
    match = re.match(
        r"stm32f4: flash needs ([\d,]+) bytes, has 1,048,576: ([\d,]+) bytes over "
        r"\(weights ([\d,]+)",
        message,
    )
    assert match is not None, message
    need, over, weights = (int(g.replace(",", "")) for g in match.groups())
    assert need - 1_048_576 == over
    assert weights >= mlp.constant_bytes  # the const arrays, measured in .rodata
    report = memory_report(mlp, "stm32f4", check=False)
    assert not report.fits and report.needed("flash") == need
    assert "DOES NOT FIT" in str(report)
    assert re.search(r"weights +flash +[\d,]+ +placed in no region", str(report))


def test_cnn_small_fits_and_sections_match_the_factory(cnn_small: Any) -> None:
    report = memory_report(cnn_small, "nrf52840")
    assert report.fits
    by_name = {(s.name, s.memory): s.nbytes for s in report.sections}
    assert by_name[("workspace", "ram")] >= cnn_small.workspace_bytes
    assert by_name[("weights", "flash")] >= cnn_small.constant_bytes
    assert by_name[("io", "ram")] == cnn_small.io_bytes
    assert by_name[("code", "flash")] > 0 and by_name[("stack", "ram")] > 0
    assert by_name[("crt code", "flash")] > 0 and by_name[("crt data", "ram")] > 0
    ram = next(u for u in report.regions if u.region.kind == "ram")
    assert ram.used == report.needed("ram") and ram.free == ram.region.size - ram.used
    assert memory_report(cnn_small, "mps2-an386").fits
    assert memory_report(cnn_small, "stm32f4", crt=None).fits  # standalone, no RPC runtime
    text = str(report)
    assert "workspace" in text and "nrf52840" in text and "fits" in text


def test_report_reads_an_mlf_archive(cnn_small: Any, tmp_path: Path) -> None:
    path = export_model_library_format(cnn_small, tmp_path / "m.tar")
    from_tar = memory_report(path, "nrf52840")
    direct = memory_report(cnn_small, "nrf52840")
    assert from_tar.sections == direct.sections


def test_json_map_file_and_dict(cnn_small: Any, tmp_path: Path) -> None:
    spec = {
        "regions": [
            {"name": "flash", "kind": "flash", "origin": "0x08000000", "size": "512K"},
            {"name": "sram1", "kind": "ram", "origin": "0x20000000", "size": "16K"},
            {"name": "sram2", "kind": "ram", "origin": "0x20004000", "size": "512K"},
        ]
    }
    path = tmp_path / "board.json"
    path.write_text(json.dumps(spec))
    report = memory_report(cnn_small, str(path))
    assert report.memory_map.name == "board"
    uses = {u.region.name: u for u in report.regions}
    assert uses["sram2"].used > uses["sram1"].used  # the workspace takes the big region
    assert memory_report(cnn_small, spec).fits
    tiny = {
        "name": "tiny",
        "regions": [
            {"name": "flash", "kind": "flash", "origin": 0, "size": "1M"},
            {"name": "a", "kind": "ram", "origin": 0x20000000, "size": "80K"},
            {"name": "b", "kind": "ram", "origin": 0x30000000, "size": "80K"},
        ],
    }
    with pytest.raises(MemoryMapError, match=r"tiny: ram \(a\+b\) has 163,840 bytes"):
        memory_report(cnn_small, tiny)


@pytest.mark.parametrize(
    ("spec", "match"),
    [
        ({"regions": "flash"}, "'regions' list"),
        ({"regions": [{"name": "f", "kind": "flash", "origin": 0}]}, "lacks"),
        ({"regions": [{"name": "f", "kind": "rom", "origin": 0, "size": 1}]}, "kind 'rom'"),
        ({"regions": [{"name": "f", "kind": "flash", "origin": 0, "size": "lots"}]}, "size"),
        ({"regions": [{"name": "f", "kind": "flash", "origin": 0, "size": 8}]}, "no 'ram'"),
        (
            {
                "regions": [
                    {"name": "f", "kind": "flash", "origin": 0, "size": 4096},
                    {"name": "r", "kind": "ram", "origin": 100, "size": 4096},
                ]
            },
            "overlap",
        ),
    ],
)
def test_bad_maps_are_refused(spec: dict[str, Any], match: str) -> None:
    with pytest.raises(TVMValueError, match=match):
        load_memory_map(spec)


def test_unknown_map_name_and_wrong_module(tmp_path: Path) -> None:
    with pytest.raises(TVMValueError, match="neither a built-in map"):
        load_memory_map("stm32f9")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(TVMValueError, match="not JSON"):
        load_memory_map(bad)
    with pytest.raises(TVMTypeError, match="AOT executor factory"):
        memory_report(object(), "stm32f4")


def test_builtin_maps() -> None:
    assert BUILTIN_MAPS["stm32f4"].total("flash") == 1 << 20
    assert BUILTIN_MAPS["stm32f4"].total("ram") == 192 << 10
    assert BUILTIN_MAPS["nrf52840"].total("ram") == 256 << 10
    assert BUILTIN_MAPS["mps2-an386"].of_kind("ram")[0].origin == 0x20000000
