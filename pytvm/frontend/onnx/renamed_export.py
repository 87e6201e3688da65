"""``from_onnx(export_node_renamed_model_path=...)``: save the model with every unnamed node
named as TVM names it, ``<op_type>_<k>`` with ``k`` counting the unnamed nodes of that type, so
messages and spans can be traced back to a node of the saved model.
"""

from __future__ import annotations

import datetime
import os
from pathlib import Path
from typing import Any

__all__ = ["export_renamed_model", "name_unnamed_nodes"]


def name_unnamed_nodes(graph: Any) -> None:
    """Name each node of ``graph`` (an ``onnx.GraphProto``, edited in place) that has no name."""
    counts: dict[str, int] = {}
    for node in graph.node:
        if node.name:
            continue
        k = counts.get(node.op_type, -1) + 1
        counts[node.op_type] = k
        node.name = f"{node.op_type}_{k}"


def export_renamed_model(model: Any, folder: str | os.PathLike[str]) -> Path:
    """Save a copy of ``model`` with its unnamed nodes named into ``folder`` (created when
    missing) as ``tvm_exported_model_<timestamp>.onnx``; returns the file's path.
    """
    import onnx

    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    name_unnamed_nodes(copy.graph)
    Path(folder).mkdir(parents=True, exist_ok=True)
    stamp = datetime.datetime.now(tz=datetime.UTC).strftime("%m_%d_%Y_%H_%M_%S_%f")
    path = Path(folder) / f"tvm_exported_model_{stamp}.onnx"
    onnx.save(copy, os.fspath(path))
    return path
