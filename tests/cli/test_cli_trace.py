"""``pytvm trace copy``: seed 000's copy through a tracker, a board server and the accelerator
emulator, traced and printed.
"""

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
def test_trace_copy_mermaid_prints_only_the_diagram(tmp_path: Path) -> None:
    out = tmp_path / "copy.json"
    result = subprocess.run(
        [sys.executable, "-m", "pytvm", "trace", "copy", "--mermaid", "--chrome", str(out)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    diagram = result.stdout.splitlines()
    assert diagram[0] == "sequenceDiagram"
    assert all(line.startswith("    ") and line.strip() for line in diagram[1:]), diagram
    assert any("device" in line and "participant" in line for line in diagram)
    stderr = result.stderr.splitlines()  # the services' logs, the text tree and the file note
    text = stderr[next(i for i, line in enumerate(stderr) if line.startswith("trace: ")) :]
    assert "board pid" in text[0] and "device pid" in text[0]
    assert text[1].startswith("NDArray.copyfrom ")
    for needle in ("device_api.rpc", "kCopyToRemote", "TVMDeviceCopyDataFromTo", "kDevStreamSync"):
        assert needle in result.stderr
    assert f"wrote {out}" in result.stderr
    doc = json.loads(out.read_text())
    assert {e["ph"] for e in doc["traceEvents"]} >= {"X", "M"}
    # seed 000's copy across three processes: every event drawn inside the one that caused it
    spans: dict[tuple[int, int], list[dict[str, float]]] = {}
    for e in doc["traceEvents"]:
        if e["ph"] == "X":
            spans.setdefault((e["pid"], e["tid"]), []).append(e)
    flows = {e["id"]: e for e in doc["traceEvents"] if e["ph"] == "s"}
    finishes = [e for e in doc["traceEvents"] if e["ph"] == "f"]
    assert finishes and len(finishes) == len(flows)
    for finish in finishes:
        start = flows[finish["id"]]
        (child,) = [s for s in spans[(finish["pid"], finish["tid"])] if s["ts"] == finish["ts"]]
        parents = [s for s in spans[(start["pid"], start["tid"])] if s["ts"] <= start["ts"]]
        parent = max(parents, key=lambda s: s["ts"])
        assert parent["ts"] <= child["ts"]
        assert child["ts"] + child["dur"] <= parent["ts"] + parent["dur"] + 1e-6


@pytest.mark.needs_cc
def test_trace_copy_prints_the_text_tree_on_stdout() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pytvm", "trace", "copy"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("trace: ") and lines[1].startswith("NDArray.copyfrom ")
    assert "sequenceDiagram" not in result.stdout
