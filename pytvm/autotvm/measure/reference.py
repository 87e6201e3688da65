"""The reference a candidate's outputs are checked against: the task's default configuration
(the fallback, what an untuned build compiles) run on seeded random inputs in a local worker
process, once per task, so no server (faulty or not) supplies it.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...driver.build_module import build
from ...ffi.device import cpu
from ...runtime.ndarray import array
from ...te.tensor import PlaceholderOp
from ..task.space import FallbackConfigEntity
from .executor import PopenWorker
from .local_builder import FUNC_NAME, arg_info, warm_up

__all__ = ["INPUT_SEED", "count_outputs", "random_inputs", "reference_outputs"]

#: Seed of the random inputs (the reference and every candidate get the same).
INPUT_SEED = 0


def random_inputs(info: Sequence[tuple[tuple[int, ...], str]]) -> list[np.ndarray]:
    """Arrays of ``(shape, dtype)`` each, from :data:`INPUT_SEED`: floats in [-1, 1], integers
    in [-8, 8] (within the type's range).
    """
    rng = np.random.default_rng(INPUT_SEED)
    out = []
    for shape, dtype in info:
        if np.issubdtype(np.dtype(dtype), np.floating):
            out.append(rng.uniform(-1.0, 1.0, size=shape).astype(dtype))
        else:
            limits = np.iinfo(np.dtype(dtype))
            lo, hi = max(int(limits.min), -8), min(int(limits.max), 8)
            out.append(rng.integers(lo, hi, size=shape, endpoint=True).astype(dtype))
    return out


def count_outputs(tensors: Sequence[Any]) -> int:
    """How many of ``tensors`` are computed (not placeholders)."""
    return sum(1 for t in tensors if not isinstance(t.op, PlaceholderOp))


def _reference(task: Any) -> tuple[int, list[np.ndarray]]:
    """In a worker: the number of outputs and the outputs of the task's default configuration
    on the random inputs, run here.
    """
    sch, tensors = task.instantiate(FallbackConfigEntity())
    n_out = count_outputs(tensors)
    info = arg_info(tensors)
    func = build(sch, tensors, target=task.target, name=FUNC_NAME)
    values = random_inputs(info[: len(info) - n_out])
    values += [np.zeros(shape, dtype) for shape, dtype in info[len(info) - n_out :]]
    args = [array(v, cpu(0)) for v in values]
    func[FUNC_NAME](*args)
    return n_out, [a.numpy() for a in args[len(args) - n_out :]]


#: The worker process computing references (one, reused: its imports are paid once).
_REFERENCE_WORKER = PopenWorker(initializer=warm_up)
_REFERENCE_LOCK = threading.Lock()


def reference_outputs(task: Any, timeout: float) -> tuple[int, list[np.ndarray]]:
    """The number of outputs of ``task`` and its default configuration's outputs on the
    random inputs, computed in the reference worker within ``timeout`` seconds.
    """
    with _REFERENCE_LOCK:
        result: tuple[int, list[np.ndarray]] = _REFERENCE_WORKER.call(
            _reference, (task,), timeout=timeout
        )
    return result
