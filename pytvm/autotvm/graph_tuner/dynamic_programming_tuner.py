"""The graph tuner's dynamic-programming solver (TVM's ``DPTuner``): forward over the chain of
nodes, the cheapest way to reach each candidate of a node (its time, plus the cheapest
predecessor's total and the transform between them), then back from the cheapest last one.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .base_graph_tuner import BaseGraphTuner

__all__ = ["DPTuner"]


class DPTuner(BaseGraphTuner):
    """Choose each node's configuration by dynamic programming (exact on the chain)."""

    def run(self, **kwargs: Any) -> None:
        """Solve; the choice is then in :meth:`get_optimal_records`."""
        costs, transforms = self.node_costs(), self.transform_costs()
        if not costs:
            self._set_choice([])
            return
        total = costs[0].copy()
        back: list[np.ndarray] = []
        for node, step in zip(costs[1:], transforms, strict=True):
            reach = total[:, None] + step + node[None, :]
            arg = reach.argmin(axis=0)
            back.append(arg)
            total = reach[arg, np.arange(len(node))]
        choice = [int(total.argmin())]
        for arg in reversed(back):
            choice.append(int(arg[choice[-1]]))
        self._set_choice(choice[::-1])
