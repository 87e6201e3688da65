"""Initializers of a workload's parameters, chosen by the parameter's name (TVM's
``relay.testing.init``): ``*_weight`` by :class:`Xavier`, ``*_bias``/``*_beta``/``*_mean``
zero, ``*_gamma``/``*_var`` one.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ...ffi.errors import TVMValueError

__all__ = ["Initializer", "Xavier"]


class Initializer:
    """Fills a parameter by its name's suffix; subclasses choose how weights are drawn."""

    def __call__(self, name: str, shape: Sequence[int], rng: np.random.Generator) -> np.ndarray:
        """The initial value of parameter ``name`` of ``shape`` (float32)."""
        shape = tuple(int(d) for d in shape)
        if name.endswith("weight"):
            return self.weight(name, shape, rng).astype("float32")
        if name.endswith(("bias", "beta", "mean")):
            return np.zeros(shape, "float32")
        if name.endswith(("gamma", "var")):
            return np.ones(shape, "float32")
        raise TVMValueError(
            f"initializer: no rule for parameter {name!r}; names end in weight, bias, beta, "
            "mean, gamma or var"
        )

    def weight(self, name: str, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
        """A weight's initial value."""
        raise NotImplementedError(f"{type(self).__name__} does not draw weights ({name})")


class Xavier(Initializer):
    """Glorot's initialization: uniform (or gaussian) with scale ``sqrt(magnitude / fan)``,
    where ``fan`` is the fan in, the fan out, or their mean (``factor_type="avg"``).
    """

    def __init__(
        self, rnd_type: str = "uniform", factor_type: str = "avg", magnitude: float = 3.0
    ) -> None:
        if rnd_type not in ("uniform", "gaussian"):
            raise TVMValueError(f"Xavier: rnd_type {rnd_type!r}; use 'uniform' or 'gaussian'")
        if factor_type not in ("avg", "in", "out"):
            raise TVMValueError(f"Xavier: factor_type {factor_type!r}; use 'avg', 'in' or 'out'")
        self.rnd_type = rnd_type
        self.factor_type = factor_type
        self.magnitude = float(magnitude)

    def weight(self, name: str, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
        """A weight drawn with Glorot's scale (needs two or more dimensions)."""
        if len(shape) < 2:  # noqa: PLR2004
            raise TVMValueError(f"Xavier: weight {name!r} of shape {shape} has fewer than 2 dims")
        receptive = math.prod(shape[2:])
        fan_in, fan_out = shape[1] * receptive, shape[0] * receptive
        fan = {"avg": (fan_in + fan_out) / 2.0, "in": fan_in, "out": fan_out}[self.factor_type]
        scale = math.sqrt(self.magnitude / fan)
        if self.rnd_type == "uniform":
            return rng.uniform(-scale, scale, shape)
        return rng.normal(0.0, scale, shape)
