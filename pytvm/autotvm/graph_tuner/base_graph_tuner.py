"""The graph tuner's problem (TVM's ``autotvm.graph_tuner.BaseGraphTuner``): one configuration
per tuned node of a model, minimizing the kernels' times plus the layout transforms between them.

The nodes are the model's tuning tasks of the ``target_ops`` operators, in the order the build
first meets them (``extract_from_program`` on the graph, its weights taken as constants as
``relay.build(..., params=...)`` takes them, so the workloads are those the kernel tuning
measured). Each node's candidates are the ``max_sch_num`` fastest successful records of its
workload for the target. Between two consecutive nodes lies a matrix of layout-transform costs,
one per pair of candidates: TVM's ``conv2d_NCHWc`` candidates choose their data layout
(``NCHW[x]c``) through their ``tile_ic``/``tile_oc`` knobs, so a pair may need a transform.
pytvm's kernels read and write the graph's own data layout whatever their configuration (weights
are packed ahead of time by ``AlterOpLayout``; no knob changes an activation's layout), so no
transform lies between any two candidates and every matrix is 0:
:meth:`benchmark_layout_transform` has nothing to time. The solvers (``DPTuner``,
``PBQPTuner``) are exact on the chain of nodes for any matrices.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ...ffi.errors import TVMValueError
from ...target import Target
from ..measure.measure import MeasureInput, MeasureResult
from ..record import encode
from ..task.dispatcher import _unpack_records
from ..task.relay_integration import _as_module, extract_from_program

__all__ = ["BaseGraphTuner"]


def _weights_of(mod: Any, input_shapes: Mapping[str, Sequence[int]]) -> dict[str, np.ndarray]:
    """Zero arrays for every parameter of the graph's main function that is not an input."""
    params = list(mod["main"].params)
    names = {p.name for p in params}
    missing = sorted(set(input_shapes) - names)
    if missing:
        raise TVMValueError(
            f"graph tuner: input_shapes names {missing}, which are not parameters of the graph "
            f"(its parameters: {sorted(names)})"
        )
    weights: dict[str, np.ndarray] = {}
    for p in params:
        ty = p.type_annotation
        shape = tuple(int(d) for d in getattr(ty, "shape", ()))
        if p.name in input_shapes:
            if tuple(int(d) for d in input_shapes[p.name]) != shape:
                raise TVMValueError(
                    f"graph tuner: input {p.name!r} has shape {shape} in the graph, "
                    f"{tuple(input_shapes[p.name])} in input_shapes"
                )
            continue
        weights[p.name] = np.zeros(shape, dtype=str(getattr(ty, "dtype", "float32")))
    return weights


def _mean_cost(res: MeasureResult) -> float:
    return float(np.mean([float(c) for c in res.costs]))


class BaseGraphTuner:
    """The nodes, their candidates and the transform costs of a graph (see the module).

    ``graph``: a graph function or module; ``input_shapes``: ``{name: shape}`` of its data
    inputs (every other parameter is a weight); ``records``: the kernel tuning's log (a path,
    an open file or pairs); ``target_ops``: the operators to tune (``relay.op.get(...)`` or
    names); ``target``: the target the records were measured on.
    """

    def __init__(
        self,
        graph: Any,
        input_shapes: Mapping[str, Sequence[int]],
        records: Any,
        target_ops: Sequence[Any],
        target: Any,
        max_sch_num: int = 20,
        dtype: str = "float32",
        verbose: bool = True,
        log_file: str = "graph_tuner.log",
        log_level: int = logging.DEBUG,
        name: str = "graph_tuner",
    ) -> None:
        if max_sch_num < 1:
            raise TVMValueError(f"graph tuner: max_sch_num {max_sch_num}; expected >= 1")
        self._target = target if isinstance(target, Target) else Target(target)
        self._dtype = dtype
        self._max_sch_num = max_sch_num
        self._logger = logging.getLogger(name + "_logger")
        self._logger.setLevel(log_level)
        path = str(Path(log_file).resolve())
        if verbose and not any(
            getattr(h, "baseFilename", None) == path for h in self._logger.handlers
        ):
            self._logger.addHandler(logging.FileHandler(path))
        mod = _as_module(graph)
        self._tasks = extract_from_program(
            mod, _weights_of(mod, input_shapes), self._target, ops=target_ops
        )
        self._records = _unpack_records(records)
        self._candidates = [self._candidates_of(t.workload) for t in self._tasks]
        self._layout_transform_costs: list[np.ndarray] | None = None
        self._optimal: list[int] | None = None
        untuned = [t.name for t, c in zip(self._tasks, self._candidates, strict=True) if not c]
        self._logger.info(
            "graph tuner: %d nodes, %d without records (%s)", len(self._tasks), len(untuned),
            ", ".join(untuned) or "none",
        )  # fmt: skip

    def _candidates_of(self, workload: Any) -> list[tuple[MeasureInput, MeasureResult]]:
        keys = set(self._target.keys)
        found = [
            (inp, res)
            for inp, res in self._records
            if res.error_no == 0 and inp.task.workload == workload and keys & set(inp.target.keys)
        ]
        found.sort(key=lambda r: _mean_cost(r[1]))
        out: list[tuple[MeasureInput, MeasureResult]] = []
        seen: set[int] = set()
        for inp, res in found:  # one candidate per configuration, its fastest measurement
            if int(inp.config.index) not in seen:
                seen.add(int(inp.config.index))
                out.append((inp, res))
        return out[: self._max_sch_num]

    @property
    def nodes(self) -> list[Any]:
        """The tuned nodes' tasks, in graph order."""
        return list(self._tasks)

    def _chain(self) -> list[int]:
        """The nodes that have candidates, in graph order (the others keep their fallback)."""
        return [i for i, c in enumerate(self._candidates) if c]

    def node_costs(self) -> list[np.ndarray]:
        """Each chained node's candidate times in seconds."""
        return [np.array([_mean_cost(r) for _, r in self._candidates[i]]) for i in self._chain()]

    def benchmark_layout_transform(
        self,
        min_exec_num: int = 100,
        timeout: float = 10,
        use_rpc: bool = False,
        device_key: str | None = None,
        host: str = "127.0.0.1",
        port: int = 9190,
        n_parallel: int = 1,
        build_func: Any = "default",
        layout_records: Any = None,
        target_host: Any = None,
        infer_layout: bool = False,
        runner: Any = None,
    ) -> None:
        """The transform-cost matrix between each pair of consecutive chained nodes (TVM's
        signature). Every candidate of a pytvm node reads and writes the graph's data layout,
        so every pair of candidates needs no transform and every entry is 0 (see the module);
        nothing is timed, and the measuring options are only checked.
        """
        if min_exec_num < 1 or not timeout > 0 or n_parallel < 1:
            raise TVMValueError(
                f"benchmark_layout_transform: min_exec_num={min_exec_num}, timeout={timeout}, "
                f"n_parallel={n_parallel}; expected positive values"
            )
        if use_rpc and not device_key:
            raise TVMValueError("benchmark_layout_transform: use_rpc=True needs a device_key")
        chain = self._chain()
        self._layout_transform_costs = [
            np.zeros((len(self._candidates[a]), len(self._candidates[b])))
            for a, b in itertools.pairwise(chain)
        ]
        self._logger.info(
            "graph tuner: %d node pairs; the candidates of each pair share the graph's data "
            "layout, so no layout transform is timed",
            len(self._layout_transform_costs),
        )

    def transform_costs(self) -> list[np.ndarray]:
        """The matrices of :meth:`benchmark_layout_transform` (computed on first use)."""
        if self._layout_transform_costs is None:
            self.benchmark_layout_transform()
        assert self._layout_transform_costs is not None
        return self._layout_transform_costs

    def run(self, **kwargs: Any) -> None:
        """Choose one candidate per chained node (the subclasses' solvers)."""
        raise NotImplementedError(f"{type(self).__name__}.run: a graph tuner defines run()")

    def _set_choice(self, choice: Sequence[int]) -> None:
        self._optimal = [int(c) for c in choice]
        total = sum(float(c[k]) for c, k in zip(self.node_costs(), self._optimal, strict=True))
        total += sum(
            float(t[a, b])
            for t, a, b in zip(
                self.transform_costs(), self._optimal, self._optimal[1:], strict=False
            )
        )
        self._logger.info("graph tuner: %s chose %s, %.6f s", type(self).__name__, choice, total)

    def get_optimal_records(self) -> list[tuple[MeasureInput, MeasureResult]]:
        """The chosen record of each chained node, in graph order (after :meth:`run`)."""
        if self._optimal is None:
            raise TVMValueError("get_optimal_records: call run() first")
        return [self._candidates[i][k] for i, k in zip(self._chain(), self._optimal, strict=True)]

    def write_opt_sch2record_file(self, record_file: str = "graph_opt_schedule.log") -> None:
        """Write the chosen records (``autotvm.apply_graph_best`` reads them)."""
        text = "".join(encode(inp, res) + "\n" for inp, res in self.get_optimal_records())
        Path(record_file).write_text(text, encoding="utf-8")
        self._logger.info("graph tuner: wrote %s", record_file)
