"""AutoTVM test helpers (TVM's ``tvm.testing.autotvm``): a runner that measures nothing, the
``testing/matmul`` template and sample tasks and records built from it, and the workload
arguments of the x86 strategy rows' tasks that several tests tune.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from .. import te
from ..autotvm import MeasureInput, MeasureResult
from ..autotvm.measure.measure import Runner
from ..autotvm.task.dispatcher import ApplyConfig, get_config
from ..autotvm.task.space import ConfigEntity, ConfigSpace, FallbackConfigEntity
from ..autotvm.task.task import Task, create, template
from ..target import Target
from ..topi.x86.tunable import attrs_key

__all__ = [
    "DENSE_ARGS",
    "DummyRunner",
    "NullBuilder",
    "ScoringRunner",
    "bad_matmul",
    "conv2d_nchwc_args",
    "fallback_point",
    "get_sample_records",
    "get_sample_task",
    "matmul",
    "scoring_cost",
    "scoring_option",
    "tutorial_matmul",
]

# ``dense.x86``: a (4, 64) x (32, 64)^T product (32 units).
DENSE_ARGS: tuple[Any, ...] = (
    ("TENSOR", (4, 64), "float32"),
    ("TENSOR", (32, 64), "float32"),
    "nn.dense",
    attrs_key({"units": 32}),
    True,
)


class DummyRunner(Runner):
    """A runner that runs nothing: every input gets a random cost in [0, 1) seconds and no
    error, so a tuner's loop can be driven without a device.
    """

    def __init__(self) -> None:
        super().__init__(1, 1)

    def run(self, measure_inputs: Sequence[Any], build_results: Sequence[Any]) -> list[Any]:
        """One successful :class:`MeasureResult` with a random cost per input."""
        return [
            MeasureResult((float(np.random.random()),), 0, 0.2, time.time()) for _ in measure_inputs
        ]

    def get_build_kwargs(self) -> dict[str, Any]:
        """No device-specific build arguments."""
        return {}


def scoring_cost(config: Any, best: Mapping[str, Any]) -> float:
    """Seconds for ``config`` of a knob-only space: 1 ms times one plus the squared distance of
    its knob values from ``best``, so ``best`` is the unique optimum.
    """
    opts = config.get_other_option()
    return 1e-3 * (1 + sum(float(opts[k] - v) ** 2 for k, v in best.items()))


class NullBuilder:
    """A builder that builds nothing (one ``None`` per input), for runners that need no
    artifact.
    """

    def __init__(self, n_parallel: int = 4) -> None:
        self.n_parallel = n_parallel

    def build(self, inputs: Sequence[MeasureInput]) -> list[None]:
        """One ``None`` per input."""
        return [None] * len(inputs)


class ScoringRunner:
    """A runner that scores each configuration with :func:`scoring_cost` around ``best``
    (deterministic, no device) and records the indices it measured, in order, in ``measured``.
    """

    def __init__(self, best: Mapping[str, Any]) -> None:
        self.best = dict(best)
        self.measured: list[int] = []

    def run(self, inputs: Sequence[MeasureInput], builds: Sequence[None]) -> list[MeasureResult]:
        """One successful :class:`MeasureResult` per input, its cost from ``scoring_cost``."""
        assert len(builds) == len(inputs)
        self.measured += [inp.config.index for inp in inputs]
        return [
            MeasureResult((scoring_cost(i.config, self.best),), 0, 0.0, time.time()) for i in inputs
        ]


def scoring_option(
    best: Mapping[str, Any], n_parallel: int = 4
) -> tuple[dict[str, Any], ScoringRunner]:
    """A ``measure_option`` of a :class:`NullBuilder` and a :class:`ScoringRunner` around
    ``best``, and that runner.
    """
    runner = ScoringRunner(best)
    return {"builder": NullBuilder(n_parallel), "runner": runner}, runner


@template("testing/matmul")
def matmul(N: int, L: int, M: int, dtype: str) -> tuple[Any, list[Any]]:
    """``C[N, M] = A[N, L] @ B[L, M]`` with two split knobs ``tile_y`` / ``tile_x``.

    ``tile_x`` splits the column loop only when its inner factor exceeds 1, so configurations
    differ in their number of loops (loop features must cope with that).
    """
    A = te.placeholder((N, L), name="A", dtype=dtype)
    B = te.placeholder((L, M), name="B", dtype=dtype)
    k = te.reduce_axis((0, L), name="k")
    C = te.compute((N, M), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    s = te.create_schedule(C.op)
    y, x = s[C].op.axis
    red = s[C].op.reduce_axis[0]
    cfg = get_config()
    cfg.define_split("tile_y", y, num_outputs=2)
    cfg.define_split("tile_x", x, num_outputs=2)
    yo, yi = cfg["tile_y"].apply(s, C, y)
    if cfg["tile_x"].size[-1] > 1:
        xo, xi = cfg["tile_x"].apply(s, C, x)
        s[C].reorder(yo, xo, red, yi, xi)
    else:
        s[C].reorder(yo, red, yi, x)
    return s, [A, B, C]


@template("testing/bad_matmul")
def bad_matmul(N: int, L: int, M: int, dtype: str) -> tuple[Any, list[Any]]:
    """``testing/matmul``, except under a target with the key ``bad_device``: there the
    reduction misses its last element, so its output is wrong (a runner's output check must
    flag it).
    """
    target = Target.current(allow_none=True)
    if target is None or "bad_device" not in target.keys:
        return matmul(N, L, M, dtype)
    A = te.placeholder((N, L), name="A", dtype=dtype)
    B = te.placeholder((L, M), name="B", dtype=dtype)
    k = te.reduce_axis((0, L - 1), name="k")
    C = te.compute((N, M), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    s = te.create_schedule(C.op)
    y, x = s[C].op.axis
    cfg = get_config()
    cfg.define_split("tile_y", y, num_outputs=2)
    cfg.define_split("tile_x", x, num_outputs=2)
    return s, [A, B, C]


def tutorial_matmul(n: int, l: int, m: int, dtype: str) -> tuple[Any, list[Any]]:  # noqa: E741
    """TVM's ``tune_simple_template`` matmul body (two split knobs, always applied); a test
    registers it under its own name with ``autotvm.template(name, tutorial_matmul)``.
    """
    a = te.placeholder((n, l), name="A", dtype=dtype)
    b = te.placeholder((l, m), name="B", dtype=dtype)
    k = te.reduce_axis((0, l), name="k")
    c = te.compute((n, m), lambda i, j: te.sum(a[i, k] * b[k, j], axis=k), name="C")
    s = te.create_schedule(c.op)
    y, x = s[c].op.axis
    k = s[c].op.reduce_axis[0]
    cfg = get_config()
    cfg.define_split("tile_y", y, num_outputs=2)
    cfg.define_split("tile_x", x, num_outputs=2)
    yo, yi = cfg["tile_y"].apply(s, c, y)
    xo, xi = cfg["tile_x"].apply(s, c, x)
    s[c].reorder(yo, xo, k, yi, xi)
    return s, [a, b, c]


def conv2d_nchwc_args(
    in_blocks: int, size: int, padding: tuple[int, ...] = (1, 1)
) -> tuple[Any, ...]:
    """The workload arguments of a ``conv2d_NCHWc.x86`` task: batch 1, ``in_blocks`` x 8 input
    channels of ``size`` x ``size`` and as many output channels, a 3x3 kernel, stride and
    dilation 1, ``padding``, layout ``NCHW8c``, float32.
    """
    return (
        ("TENSOR", (1, in_blocks, size, size, 8), "float32"),
        ("TENSOR", (in_blocks, in_blocks, 3, 3, 8, 8), "float32"),
        (1, 1),
        padding,
        (1, 1),
        "NCHW8c",
        "NCHW8c",
        "float32",
    )


def fallback_point(space: ConfigSpace, schedule: Callable[[], Any]) -> ConfigEntity:
    """The point of ``space`` whose knobs hold the values a fallback configuration takes while
    ``schedule()`` runs under it (target ``llvm``): an untuned build's configuration.
    """
    fallback = FallbackConfigEntity()
    with Target("llvm"), ApplyConfig(fallback):
        schedule()
    index, stride = 0, 1
    for name, knob in space.space_map.items():
        vals = [e.val for e in knob.entities]
        index += vals.index(fallback[name].val) * stride
        stride *= len(knob)
    entity: ConfigEntity = space.get(index)
    return entity


def get_sample_task(n: int = 128) -> tuple[Task, Target]:
    """The ``testing/matmul`` task of an ``n``-cube float32 product on ``llvm``, and its
    target.
    """
    target = Target("llvm")
    task = create("testing/matmul", args=(n, n, n, "float32"), target=target)
    return task, target


def get_sample_records(n: int) -> list[tuple[Any, Any]]:
    """``n`` (input, result) pairs of the sample task: configuration ``i mod len(space)``,
    cost ``i + 1`` seconds, all successful.
    """
    task, target = get_sample_task()
    space = task.config_space
    return [
        (
            MeasureInput(target, task, space.get(i % len(space))),
            MeasureResult((float(i + 1),), 0, float(i), time.time()),
        )
        for i in range(n)
    ]
