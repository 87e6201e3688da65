"""The tuner led by an XGBoost cost model (TVM's ``autotvm.tuner.XGBTuner``).

Examples
--------
>>> from pytvm.autotvm.tuner import XGBTuner
>>> XGBTuner.__mro__[1].__name__
'ModelBasedTuner'
"""

from __future__ import annotations

from typing import Any

from ...ffi.errors import TVMTypeError
from .model_based_tuner import ModelBasedTuner, ModelOptimizer
from .sa_model_optimizer import SimulatedAnnealingOptimizer
from .xgboost_cost_model import XGBoostCostModel

__all__ = ["XGBTuner"]


class XGBTuner(ModelBasedTuner):
    """Tune with an :class:`XGBoostCostModel` and simulated annealing over it.

    Parameters
    ----------
    task : Task
        The task (its ``config_space``, ``target`` and ``instantiate``).
    plan_size : int
        Trials per plan: the model is refitted after every ``plan_size`` results.
    feature_type : str
        ``"itervar"`` (loop features; the most accurate, and they transfer across shapes),
        ``"knob"`` (knob values; the fastest) or ``"curve"`` (loop-structure free; transfers
        across operators).
    loss_type : str
        ``"reg"`` (regression on normalised FLOPS), ``"rank"`` or ``"rank-binary"`` (pairwise).
    num_threads : int, optional
        XGBoost's threads.
    optimizer : str or ModelOptimizer
        ``"sa"``: a :class:`SimulatedAnnealingOptimizer`; or an optimizer object.
    diversity_filter_ratio : float, optional
        Take ``plan_size * ratio`` candidates and keep the ``plan_size`` most diverse.
    log_interval : int
        Debug logging period (0: none).
    seed : int, optional
        pytvm's: fixes the random picks, the annealing and the training order.
    """

    def __init__(
        self,
        task: Any,
        plan_size: int = 64,
        feature_type: str = "itervar",
        loss_type: str = "reg",
        num_threads: int | None = None,
        optimizer: str | ModelOptimizer = "sa",
        diversity_filter_ratio: float | None = None,
        log_interval: int = 50,
        seed: int | None = None,
    ) -> None:
        cost_model = XGBoostCostModel(
            task,
            feature_type=feature_type,
            loss_type=loss_type,
            num_threads=num_threads,
            log_interval=log_interval // 2,
            seed=seed,
        )
        if optimizer == "sa":
            optimizer = SimulatedAnnealingOptimizer(task, log_interval=log_interval, seed=seed)
        elif not isinstance(optimizer, ModelOptimizer):
            raise TVMTypeError(
                f"XGBTuner: optimizer {optimizer!r}; expected 'sa' or a ModelOptimizer object"
            )
        super().__init__(task, cost_model, optimizer, plan_size, diversity_filter_ratio, seed)
