"""The graph tuner's PBQP solver (TVM's ``PBQPTuner``): the nodes and transform matrices form a
partitioned boolean quadratic problem; on pytvm's chain of nodes every node has degree at most
two, and the solver removes the last node by the RI reduction (its cheapest candidate per
candidate of its neighbour folds into the neighbour's costs) until one node is left, takes its
cheapest candidate and replays the reductions backwards.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .base_graph_tuner import BaseGraphTuner

__all__ = ["PBQPTuner"]


class PBQPTuner(BaseGraphTuner):
    """Choose each node's configuration by PBQP reductions (exact on the chain)."""

    def run(self, **kwargs: Any) -> None:
        """Solve; the choice is then in :meth:`get_optimal_records`."""
        costs = [c.copy() for c in self.node_costs()]
        transforms = self.transform_costs()
        if not costs:
            self._set_choice([])
            return
        picks: list[np.ndarray] = []  # picks[i][a]: best candidate of node i+1 given a at i
        for i in range(len(costs) - 1, 0, -1):
            folded = transforms[i - 1] + costs[i][None, :]
            picks.append(folded.argmin(axis=1))
            costs[i - 1] = costs[i - 1] + folded.min(axis=1)
        choice = [int(costs[0].argmin())]
        for pick in reversed(picks):
            choice.append(int(pick[choice[-1]]))
        self._set_choice(choice)
