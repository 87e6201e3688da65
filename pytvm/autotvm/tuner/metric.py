"""Curves that score a tuning run or a cost model's ranking (TVM's ``autotvm.tuner.metric``).

A cost model is judged by the trials it would propose: sort the configurations by predicted
score, look up each one's true rank (:func:`get_rank`, 0 = fastest), and ask how many of the
first ``n`` trials are among the true best ``n`` (:func:`recall_curve`); the cost model's early
stopping maximises the average of that curve over the first ``plan_size`` trials
(:func:`average_recall`).

Examples
--------
>>> import numpy as np
>>> get_rank(np.array([3.0, 1.0, 2.0])).tolist()
[0, 2, 1]
>>> max_curve([1.0, 3.0, 2.0]).tolist()
[1.0, 3.0, 3.0]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = [
    "average_recall",
    "cover_curve",
    "get_rank",
    "max_curve",
    "mean_curve",
    "recall_curve",
]


def get_rank(values: np.ndarray) -> np.ndarray:
    """The rank of each value, 0 for the largest (TVM's ``autotvm.utils.get_rank``)."""
    order = np.argsort(-np.asarray(values), kind="stable")
    ranks = np.empty_like(order)
    ranks[order] = np.arange(len(order))
    return ranks


def max_curve(trial_scores: Sequence[float] | np.ndarray) -> np.ndarray:
    """``f(n) = max(s[i] for i <= n)``: the best score after each trial."""
    return np.maximum.accumulate(np.asarray(trial_scores, dtype="float64"))


def mean_curve(trial_scores: Sequence[float] | np.ndarray) -> np.ndarray:
    """``f(n) = mean(s[i] for i <= n)``."""
    scores = np.asarray(trial_scores, dtype="float64")
    return np.cumsum(scores) / np.arange(1, len(scores) + 1)


def recall_curve(trial_ranks: Sequence[int] | np.ndarray, top: int | None = None) -> np.ndarray:
    """With ``top`` None, ``f(n) = |{i < n : rank[i] <= n}| / (n + 1)``; else
    ``f(n) = |{i < n : rank[i] < top}| / top`` (TVM's definition, prefixes ``ranks[:n]``).
    """
    ranks = np.asarray(trial_ranks)
    ret = np.zeros(len(ranks))
    for i in range(len(ranks)):
        if top is None:
            ret[i] = np.sum(ranks[:i] <= i) / (i + 1)
        else:
            ret[i] = np.sum(ranks[:i] < top) / top
    return ret


def cover_curve(trial_ranks: Sequence[int] | np.ndarray) -> np.ndarray:
    """``f(n)``: the largest ``k`` with ranks ``0..k-1`` all among the first ``n`` trials,
    over the number of trials.
    """
    ret = np.empty(len(trial_ranks))
    keep = -1
    cover: set[int] = set()
    for i, rank in enumerate(trial_ranks):
        cover.add(int(rank))
        while keep + 1 in cover:
            keep += 1
        ret[i] = keep + 1
    return ret / max(len(trial_ranks), 1)


def average_recall(preds: np.ndarray, labels: np.ndarray, n: int) -> float:
    """The mean of :func:`recall_curve` over the first ``n`` trials, trials in order of
    ``preds`` (highest first), ranks from ``labels``.
    """
    trials = np.argsort(-np.asarray(preds), kind="stable")
    curve = recall_curve(get_rank(np.asarray(labels)[trials]))
    return float(np.sum(curve[:n]) / n)
