"""Loss operators: ``nn.nll_loss`` (TVM's negative log-likelihood of class targets)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ... import topi
from ..attrs import Attrs
from .define import define_op
from .registry import OpPattern

__all__: list[str] = []


def _nll_loss(args: Sequence[Any], attrs: Attrs, ty: Any) -> Any:
    predictions, targets, weights = args
    return topi.nn.nll_loss(
        predictions,
        targets,
        weights,
        str(attrs.get("reduction", "mean")),
        int(attrs.get("ignore_index", -100)),
    )


def nll_loss_np(
    predictions: np.ndarray,
    targets: np.ndarray,
    weights: np.ndarray,
    reduction: str = "mean",
    ignore_index: int = -100,
) -> np.ndarray:
    """Numpy ``nn.nll_loss``: ``predictions [N, C, d...]``, ``targets [N, d...]``."""
    used = targets != ignore_index
    safe = np.where(used, targets, 0).astype(np.int64)
    picked = np.take_along_axis(predictions, np.expand_dims(safe, 1), axis=1)[:, 0]
    weight = np.where(used, weights[safe], 0).astype(predictions.dtype)
    losses = np.where(used, -picked * weight, 0).astype(predictions.dtype)
    if reduction == "none":
        return losses
    total = losses.sum(dtype=np.float64)
    if reduction == "sum":
        return np.asarray(total, dtype=predictions.dtype)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(total / weight.sum(dtype=np.float64), dtype=predictions.dtype)


def _nll_loss_np(args: Sequence[np.ndarray], attrs: Attrs) -> np.ndarray:
    return nll_loss_np(
        args[0],
        args[1],
        args[2],
        str(attrs.get("reduction", "mean")),
        int(attrs.get("ignore_index", -100)),
    )


define_op("nn.nll_loss", 3, OpPattern.OPAQUE, _nll_loss, _nll_loss_np)
