"""Where a real model's time goes: every fused kernel timed by pytvm's debug executor.

``profile(path)`` builds the model as ``bench/real_models.py`` does, times each graph node
(``GraphModuleDebug.profile``: mean of in-order runs), and renders the slowest kernels with
their share of the total, their output shape and the operators fused into them, then the time
summed per kind of kernel (the function name without its numeric suffix), next to the whole
graph's latency in pytvm and ONNX Runtime. Used by ``python bench/real_models.py --profile NAME``.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path
from typing import Any

from real_models import _ort_session, best_ms, build_pytvm, feeds


def kernel_kind(func_name: str) -> str:
    """A kernel's function name without the number that makes it unique
    (``tvmgen_default_fused_nn_conv2d_add_3`` -> ``fused_nn_conv2d_add``).
    """
    name = re.sub(r"^tvmgen_[A-Za-z0-9]+_", "", func_name)
    return re.sub(r"(_\d+)+$", "", name)


def _best_of(dbg: Any, rounds: int, min_repeat_ms: int) -> Any:
    """A ``DebugReport`` whose every node's time is its best mean over ``rounds`` timings (on a
    shared machine a kernel's best round is the one least disturbed by other work).
    """
    from pytvm.runtime.graph_executor import DebugReport, NodeTime

    runs = [
        dbg.run_individual(number=1, repeat=1, min_repeat_ms=min_repeat_ms) for _ in range(rounds)
    ]
    g = dbg.graph
    rows = [
        NodeTime(
            node.name,
            node.func_name,
            min(r[nid] for r in runs),
            g.shape[g.entry_id(nid)],
            g.dltype[g.entry_id(nid)],
        )
        for nid, node in enumerate(g.nodes)
        if node.op == "tvm_op" and node.func_name != "__nop"
    ]
    return DebugReport(tuple(sorted(rows, key=lambda n: -n.seconds)))


def profile(path: Path, threads: int, top: int, min_seconds: float) -> str:
    """The per-kernel table of the model at ``path`` at ``threads`` threads."""
    import pytvm
    from pytvm.runtime.graph_executor import GraphModule, debug_executor

    pytvm.runtime.set_num_threads(threads)
    lib, build_s = build_pytvm(path)
    inputs = feeds(path)
    m = GraphModule(lib["default"](pytvm.cpu()))
    m.set_input(None, None, **inputs)
    total_ms = best_ms(m.run, min_seconds)
    sess = _ort_session(path, threads)
    ort_ms = best_ms(lambda: sess.run(None, inputs), min_seconds)
    dbg = debug_executor.create(lib.get_graph_json(), lib.get_lib(), pytvm.cpu())
    dbg.set_input(None, None, **lib.get_params(), **inputs)
    report = _best_of(dbg, rounds=5, min_repeat_ms=int(1e3 * min_seconds / 5))
    kernels_s = report.total_seconds or 1.0
    lines = [
        f"{path.stem}, {threads} thread(s): pytvm {total_ms:.2f} ms "
        f"(kernels {kernels_s * 1e3:.2f} ms, {len(report.nodes)} kernels), "
        f"ONNX Runtime {ort_ms:.2f} ms, "
        f"ratio {total_ms / ort_ms:.2f}; build {build_s:.1f} s",
        "(share: of the sum of each kernel's best of 5 timings, each kernel run alone after the "
        "one before it; the graph's latency above is the best of 5 batches of whole runs)",
        f"{'share':>6} {'ms':>8}  {'output':22} kernel (the operators fused into it)",
    ]
    for node in report.nodes[:top]:
        lines.append(
            f"{100 * node.seconds / kernels_s:5.1f}% {node.seconds * 1e3:8.3f}  "
            f"{node.shape!s:22} {node.func_name}"
        )
    kinds: dict[str, list[float]] = defaultdict(list)
    for node in report.nodes:
        kinds[kernel_kind(node.func_name)].append(node.seconds)
    lines.append(f"\nby kind of kernel:\n{'share':>6} {'ms':>8} {'count':>5}  kind")
    for kind, times in sorted(kinds.items(), key=lambda kv: -sum(kv[1]))[:top]:
        share = 100 * sum(times) / kernels_s
        lines.append(f"{share:5.1f}% {sum(times) * 1e3:8.3f} {len(times):5}  {kind}")
    return "\n".join(lines)
