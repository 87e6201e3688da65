"""``pytvm trace copy``: seed 000's copy through a tracker, a board server and the accelerator
emulator, traced and printed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pytvm.cli.main import build_parser

REPO_ROOT = Path(__file__).resolve().parents[2]


def test_trace_copy_is_a_subcommand() -> None:
    args = build_parser().parse_args(["trace", "copy", "--mermaid", "--chrome", "x.json"])
    assert (args.scenario, args.mermaid, args.chrome) == ("copy", True, "x.json")


@pytest.mark.needs_cc
def test_trace_copy_prints_every_hop(tmp_path: Path) -> None:
    out = tmp_path / "copy.json"
    result = subprocess.run(
        [sys.executable, "-m", "pytvm", "trace", "copy", "--mermaid", "--chrome", str(out)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("trace: ") and "board pid" in lines[0] and "device pid" in lines[0]
    assert lines[1].startswith("NDArray.copyfrom ")
    for needle in ("device_api.rpc", "kCopyToRemote", "TVMDeviceCopyDataFromTo", "kDevStreamSync"):
        assert needle in result.stdout
    assert "sequenceDiagram" in lines
    doc = json.loads(out.read_text())
    assert {e["ph"] for e in doc["traceEvents"]} >= {"X", "M"}
