"""Tuners searching a task's configuration space (TVM's ``autotvm.tuner``): grid search,
random search and a genetic algorithm over one base loop, and the callbacks it calls; the
model-based ``XGBTuner`` (an XGBoost cost model over loop features, simulated annealing over it).

Examples
--------
>>> from pytvm.autotvm import tuner
>>> tuner.GridSearchTuner.__mro__[1].__name__
'IndexBaseTuner'
"""

from __future__ import annotations

from . import callback
from .callback import log_to_file, progress_bar
from .droplet_tuner import DropletTuner
from .ga_tuner import GATuner
from .index_based_tuner import GridSearchTuner, IndexBaseTuner, RandomTuner
from .model_based_tuner import CostModel, ModelBasedTuner, ModelOptimizer
from .sa_model_optimizer import SimulatedAnnealingOptimizer
from .tuner import Tuner, create_measure_batch
from .xgboost_cost_model import XGBoostCostModel
from .xgboost_tuner import XGBTuner

__all__ = [
    "CostModel",
    "DropletTuner",
    "GATuner",
    "GridSearchTuner",
    "IndexBaseTuner",
    "ModelBasedTuner",
    "ModelOptimizer",
    "RandomTuner",
    "SimulatedAnnealingOptimizer",
    "Tuner",
    "XGBTuner",
    "XGBoostCostModel",
    "callback",
    "create_measure_batch",
    "log_to_file",
    "progress_bar",
]
