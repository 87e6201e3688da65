"""AutoTVM's graph tuner (TVM's ``autotvm.graph_tuner``): one configuration per tuned node of a
model from the kernel tuning's records, weighing the layout transforms between nodes
(``DPTuner``, ``PBQPTuner``); ``autotvm.apply_graph_best`` applies the choice at build time.

Examples
--------
>>> from pytvm.autotvm.graph_tuner import DPTuner, PBQPTuner
>>> DPTuner.__mro__[1].__name__
'BaseGraphTuner'
"""

from __future__ import annotations

from .base_graph_tuner import BaseGraphTuner
from .dynamic_programming_tuner import DPTuner
from .pbqp_tuner import PBQPTuner

__all__ = ["BaseGraphTuner", "DPTuner", "PBQPTuner"]
