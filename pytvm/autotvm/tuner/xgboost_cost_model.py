"""XGBoost as AutoTVM's cost model (TVM's ``autotvm.tuner.XGBoostCostModel``).

A configuration's feature vector (``feature_type``):

- ``"itervar"``: the loop features of its kernel (``task.instantiate(config)`` under the task's
  target, then ``feature.get_itervar_feature_flatten``, log-scaled), followed by the values of
  its ``define_knob`` options;
- ``"knob"``: its knob values (``feature.get_config_feature``);
- ``"curve"``: the sampled reuse/count curves (``feature.get_buffer_curve_sample_flatten``),
  followed by its option values.

A configuration that cannot be instantiated gets a zero vector. XGBoost runs on
``num_threads`` threads, 1 when None (TVM lets XGBoost take every core; on the small matrices
of a tuning plan, thread start-up on a loaded machine costs more than it gains: a 128-row
prediction took 10 ms on 2 threads against 0.5 ms on one). Features are computed in this
process, once per configuration: a cache by index (shared with the base model) holds them.
(TVM computes them in a process pool; pytvm's tuning machines are small, templates instantiate
in about 10 ms, and the builder's worker processes already use the cores.)

``fit`` trains gradient-boosted trees (depth 3, eta 0.3, up to 8000 rounds) on the FLOPS over
their maximum (``loss_type="reg"``: squared error; ``"rank"``: pairwise ranking;
``"rank-binary"``: pairwise ranking, labels binarised at 0.5 when scoring), stopping 20 rounds
(checked every other round) after the best average recall of the top ``plan_size``
(``metric.average_recall``) on the training data; predictions use the trees up to that best
round. With a base model (transfer learning) each sample starts from ``discount * base
prediction``, ``discount = 2 ** -(samples / 64)``; below 0.05 the base model is dropped.
"""

from __future__ import annotations

import contextlib
import copy
import importlib
import logging
import time
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from ...ffi.errors import TVMError, TVMValueError
from ...te.tensor import PlaceholderOp
from ..feature import (
    CURVE_SAMPLE_N,
    get_buffer_curve_sample_flatten,
    get_config_feature,
    get_itervar_feature_flatten,
    other_option_feature,
)
from ..measure.measure import MeasureInput, MeasureResult
from ..task.task import compute_flop
from .metric import average_recall
from .model_based_tuner import CostModel, FeatureCache

__all__ = ["XGBoostCostModel"]

logger = logging.getLogger("autotvm")

_BASE_PARAMS = {
    "max_depth": 3,
    "gamma": 0.0001,
    "min_child_weight": 1,
    "subsample": 1.0,
    "eta": 0.3,
    "lambda": 1.00,
    "alpha": 0,
}
_OBJECTIVES = {"reg": "reg:squarederror", "rank": "rank:pairwise", "rank-binary": "rank:pairwise"}
_FEATURE_TYPES = ("itervar", "knob", "curve")
#: Cached feature vectors per feature type before the cache is emptied (TVM's bound).
_CACHE_LIMIT = 100000


def _xgboost() -> Any:
    try:
        return importlib.import_module("xgboost")
    except ImportError as err:
        raise ImportError(
            "XGBoostCostModel needs the xgboost package: pip install xgboost-cpu "
            "(or pip install 'pytvm[tune]')"
        ) from err


def _flop_of(task: Any, config: Any, tensors: Sequence[Any]) -> float:
    """The FLOP count of a record: its task's (``task.create`` counts it), its space's or its
    configuration's (templates calling ``cfg.add_flop``), else counted from the instantiated
    ``tensors`` (a task decoded from a log has none), as ``task.create`` does.
    """
    for owner in (task, getattr(task, "config_space", None), config):
        flop = getattr(owner, "flop", None)
        if flop:
            return float(flop)
    outs = [t for t in tensors if not isinstance(t.op, PlaceholderOp)]
    try:
        return float(compute_flop(outs))
    except TVMError:  # pure data movement: no arithmetic to count
        return 1.0


class XGBoostCostModel(CostModel):
    """Gradient-boosted trees over configuration features (see the module)."""

    def __init__(
        self,
        task: Any,
        feature_type: str,
        loss_type: str = "reg",
        num_threads: int | None = None,
        log_interval: int = 25,
        upper_model: XGBoostCostModel | None = None,
        seed: int | None = None,
    ) -> None:
        if feature_type not in _FEATURE_TYPES:
            raise TVMValueError(
                f"XGBoostCostModel: feature_type {feature_type!r}; expected one of "
                f"{list(_FEATURE_TYPES)}"
            )
        if loss_type not in _OBJECTIVES:
            raise TVMValueError(
                f"XGBoostCostModel: loss_type {loss_type!r}; expected one of {list(_OBJECTIVES)}"
            )
        self.xgb = _xgboost()
        self.task = task
        self.target = task.target
        self.space = task.config_space
        self.fea_type = feature_type
        self.loss_type = loss_type
        self.num_threads = num_threads
        self.log_interval = log_interval
        self.xgb_params: dict[str, Any] = {
            **_BASE_PARAMS,
            "objective": _OBJECTIVES[loss_type],
            "verbosity": 0,
        }
        self.xgb_params["nthread"] = num_threads or 1
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.bst: Any = None
        self.best_iteration = 0
        self.feature_cache: FeatureCache = (
            upper_model.feature_cache if upper_model else FeatureCache()
        )
        self.upper_model = upper_model
        self.base_model: XGBoostCostModel | None = None
        self._sample_size = 0

    # features
    def _instantiate(self, task: Any, config: Any, target: Any) -> tuple[Any, list[Any]] | None:
        """``task.instantiate(config)`` under ``target``; None for an invalid point."""
        if getattr(task, "target", None) is None and target is not None:
            task = copy.copy(task)  # a decoded record's task: made for its record's target
            task.target = target
        try:
            with contextlib.nullcontext() if target is None else target:
                made: tuple[Any, list[Any]] = task.instantiate(config)
        except ValueError as err:  # InstantiationError, TVMValueError: an invalid point
            logger.debug("instantiating %s: %s", config, err)
            return None
        return made

    def _feature_of(self, config: Any, made: tuple[Any, list[Any]] | None) -> np.ndarray | None:
        """The feature vector of ``config`` from its instantiated schedule and tensors."""
        if self.fea_type == "knob":
            return get_config_feature(config)
        if made is None:
            return None
        sch, args = made
        if self.fea_type == "itervar":
            fea = get_itervar_feature_flatten(sch, args, take_log=True)
        else:
            fea = get_buffer_curve_sample_flatten(sch, args, CURVE_SAMPLE_N)
        return np.concatenate((fea, other_option_feature(config)))

    def _config_feature(self, config: Any) -> np.ndarray | None:
        """The feature vector of a configuration of this task (None: cannot instantiate)."""
        if self.fea_type == "knob":
            return get_config_feature(config)
        return self._feature_of(config, self._instantiate(self.task, config, self.target))

    def _get_feature(self, indexes: Sequence[int] | np.ndarray) -> np.ndarray:
        """Features of the configurations ``indexes`` of this task, computed once each."""
        if self.feature_cache.size(self.fea_type) >= _CACHE_LIMIT:
            self.feature_cache.clear(self.fea_type)
        cache = self.feature_cache.get(self.fea_type)
        indexes = [int(i) for i in indexes]
        for i in indexes:
            if i not in cache:
                cache[i] = self._config_feature(self.space.get(i))
        return _stack([cache[i] for i in indexes])

    # training
    def _train(
        self, x: np.ndarray, y: np.ndarray, margin: np.ndarray | None, plan_size: int, rounds: int,
        stopping_rounds: int,
    ) -> None:  # fmt: skip
        y = y / max(float(np.max(y)), 1e-8)
        order = self.rng.permutation(len(x))
        dtrain = self.xgb.DMatrix(x[order], y[order], nthread=self.xgb_params["nthread"])
        if margin is not None:
            dtrain.set_base_margin(margin[order])
        labels = y[order]
        if self.loss_type == "rank-binary":
            labels = (labels >= 0.5).astype("float64")  # noqa: PLR2004
        stopper = _make_stopper(self.xgb, dtrain, labels, plan_size, stopping_rounds)
        self.bst = self.xgb.train(
            self.xgb_params, dtrain, num_boost_round=rounds, callbacks=[stopper]
        )
        self.best_iteration = stopper.best_iteration
        if self.log_interval:
            logger.debug(
                "XGB best iteration %d: a-recall@%d %.4f",
                stopper.best_iteration,
                plan_size,
                stopper.best_score,
            )

    def _base_model_discount(self) -> float:
        return float(1.0 / (2 ** (self._sample_size / 64.0)))

    def fit(self, xs: Sequence[int], ys: Sequence[float], plan_size: int) -> None:
        """Fit to configurations ``xs`` of this task and their FLOPS ``ys``."""
        if len(xs) != len(ys) or not len(xs):
            raise TVMValueError(f"fit: {len(xs)} configurations, {len(ys)} scores")
        tic = time.time()
        x_train = self._get_feature(xs)
        y_train = np.asarray(ys, dtype="float64")
        self._sample_size = len(x_train)
        margin = None
        if self.base_model is not None:
            discount = self._base_model_discount()
            if discount < 0.05:  # noqa: PLR2004 - the base model has done its part
                self.base_model.upper_model = None
                self.base_model = None
            else:
                margin = discount * self.base_model.predict(xs, output_margin=True)
        self._train(x_train, y_train, margin, plan_size, 8000, 20)
        logger.debug(
            "XGB train: %.2f\tobs: %d\terror: %d\tn_cache: %d",
            time.time() - tic,
            len(xs),
            int(np.sum(y_train <= 0)),
            self.feature_cache.size(self.fea_type),
        )

    def fit_log(
        self,
        records: Iterable[tuple[MeasureInput, MeasureResult]],
        plan_size: int,
        min_seed_records: int = 500,
    ) -> bool:
        """Fit to the records of tasks of this task's template (False, nothing fitted, when
        fewer than ``min_seed_records`` have features).
        """
        tic = time.time()
        xs: list[np.ndarray | None] = []
        ys: list[float] = []
        for inp, res in records:
            if inp.task.name != self.task.name:
                continue
            made = self._instantiate(inp.task, inp.config, inp.target or inp.task.target)
            x = self._feature_of(inp.config, made)
            if made is None or x is None:
                continue
            xs.append(x)
            ok = res.error_no == 0
            ys.append(
                _flop_of(inp.task, inp.config, made[1]) / float(np.mean(res.costs)) if ok else 0.0
            )
        logger.debug("XGB load %d entries from history log", len(xs))
        if len(xs) < max(min_seed_records, 1):
            return False
        self._train(_stack(xs), np.asarray(ys), None, plan_size * 2, 400, 100)
        logger.debug("XGB train: %.2f\tobs: %d", time.time() - tic, len(xs))
        return True

    def predict(self, xs: Sequence[int] | np.ndarray, output_margin: bool = False) -> np.ndarray:
        """Predicted scores of configurations ``xs`` of this task (higher: faster)."""
        if self.bst is None:
            raise TVMValueError("XGBoostCostModel.predict: the model is not fitted yet")
        feas = _fit_width(self._get_feature(xs), int(self.bst.num_features()))
        margin = None
        if self.base_model is not None:
            margin = self._base_model_discount() * self.base_model.predict(xs, output_margin=True)
        preds = self.bst.inplace_predict(
            feas,
            iteration_range=(0, self.best_iteration + 1),
            predict_type="margin" if output_margin else "value",
            base_margin=margin,
        )
        return np.asarray(preds)

    def load_basemodel(self, base_model: Any) -> None:
        """Start from ``base_model`` (fitted by ``fit_log``) in every later fit and prediction."""
        if not isinstance(base_model, XGBoostCostModel) or base_model.bst is None:
            raise TVMValueError("load_basemodel: expected a fitted XGBoostCostModel")
        self.base_model = base_model
        base_model.upper_model = self

    def spawn_base_model(self) -> XGBoostCostModel:
        """A fresh model with the same parameters, sharing this model's feature cache."""
        return XGBoostCostModel(
            self.task,
            self.fea_type,
            self.loss_type,
            self.num_threads,
            self.log_interval,
            self,
            self.seed,
        )


def _stack(rows: Sequence[np.ndarray | None]) -> np.ndarray:
    """Rows as one matrix, shorter rows (and missing ones) padded with zeros."""
    width = max((len(r) for r in rows if r is not None), default=0)
    out = np.zeros((len(rows), width), dtype=np.float32)
    for i, r in enumerate(rows):
        if r is not None:
            out[i, : len(r)] = r
    return out


def _fit_width(x: np.ndarray, width: int) -> np.ndarray:
    """``x`` cut or zero-padded to ``width`` columns (a model trained on another task)."""
    if x.shape[1] == width:
        return x
    out = np.zeros((x.shape[0], width), dtype=x.dtype)
    n = min(width, x.shape[1])
    out[:, :n] = x[:, :n]
    return out


def _make_stopper(
    xgb: Any, dtrain: Any, labels: np.ndarray, plan_size: int, stopping_rounds: int
) -> Any:
    """An xgboost callback stopping ``stopping_rounds`` rounds after the best average recall
    of the top ``plan_size`` on the training data (checked every other round).
    """

    class _Stopper(xgb.callback.TrainingCallback):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.best_score = -np.inf
            self.best_iteration = 0

        def after_iteration(self, model: Any, epoch: int, evals_log: Any) -> bool:
            del evals_log
            if epoch % 2 == 1:
                return False
            preds = model.predict(dtrain, iteration_range=(0, epoch + 1))
            score = average_recall(preds, labels, plan_size)
            if score > self.best_score:
                self.best_score, self.best_iteration = score, epoch
                return False
            return epoch - self.best_iteration >= stopping_rounds

    return _Stopper()
