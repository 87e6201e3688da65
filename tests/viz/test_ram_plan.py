"""The RAM plan picture of an AOT model: every workspace buffer at its offset over its steps,
and the memory report's regions.
"""

from __future__ import annotations

import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import onnx
import pytest

from pytvm import relay
from pytvm.cli.main import main
from pytvm.frontend import from_onnx
from pytvm.micro import export_model_library_format, memory_report
from pytvm.viz import memory_report_text, ram_plan_svg, ram_plan_text


@pytest.fixture(scope="module")
def factory(reference_models: dict[str, Path]) -> Any:
    mod, params = from_onnx(onnx.load(reference_models["cnn_small"]))
    return relay.build(
        mod,
        target="c -mcpu=cortex-m4",
        executor=relay.backend.Executor("aot", {"interface-api": "c", "unpacked-api": True}),
        runtime=relay.backend.Runtime("crt", {"system-lib": True}),
        params=params,
    )


def test_svg_draws_every_buffer_at_its_offset(factory: Any) -> None:
    svg = ram_plan_svg(factory, title="cnn_small")
    root = ET.fromstring(svg)
    boxes = [e for e in root.iter("{http://www.w3.org/2000/svg}rect") if e.get("class") == "buffer"]
    assert len(boxes) == len(factory.memory_plan)
    tips = [box.find("{http://www.w3.org/2000/svg}title").text for box in boxes]  # type: ignore[union-attr]
    for b, tip in zip(factory.memory_plan, tips, strict=True):
        assert tip is not None
        assert f"{b.nbytes:,} B at offset {b.offset:,}" in tip
        assert f"steps {b.first_step}-{b.last_step}" in tip
    assert f"{factory.workspace_bytes:,}" in svg


def test_text_lists_each_buffer(factory: Any) -> None:
    text = ram_plan_text(factory)
    assert text.startswith(f"RAM plan of default: workspace {factory.workspace_bytes:,} bytes")
    rows = [line for line in text.splitlines() if re.match(r"\s+[\d,]+\s+[\d,]+\s+\d+-\d+", line)]
    assert len(rows) == len(factory.memory_plan)


@pytest.mark.skipif(
    shutil.which("arm-none-eabi-gcc") is None,
    reason="arm-none-eabi-gcc is not installed (make mcu installs it)",
)
def test_svg_and_text_draw_the_reports_regions(factory: Any) -> None:
    report = memory_report(factory, "nrf52840")
    root = ET.fromstring(ram_plan_svg(factory, report))
    sections = [
        e for e in root.iter("{http://www.w3.org/2000/svg}rect") if e.get("class") == "section"
    ]
    assert len(sections) == sum(len(u.sections) for u in report.regions)
    bars = memory_report_text(report).splitlines()
    assert [b.split()[0] for b in bars] == ["flash", "ram"]
    assert "workspace" in bars[1]


def test_viz_ram_command_draws_an_mlf_archive(
    factory: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tar = export_model_library_format(factory, tmp_path / "m.tar")
    assert main(["viz", "ram", str(tar), "-o", str(tmp_path / "ram.svg")]) == 0
    root = ET.fromstring((tmp_path / "ram.svg").read_text())
    boxes = [e for e in root.iter("{http://www.w3.org/2000/svg}rect") if e.get("class") == "buffer"]
    assert len(boxes) == len(factory.memory_plan)
    assert main(["viz", "ram", str(tar), "--format", "text"]) == 0
    assert capsys.readouterr().out.startswith("RAM plan of default")
