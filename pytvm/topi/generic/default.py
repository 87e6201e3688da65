"""TVM's default schedule for CPUs (``topi.generic.default``): the computation as written,
optionally with its injective stages inlined and the output's loops fused into one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ...ffi.errors import TVMValueError
from ...target import Target
from ...te.tensor import Tensor
from ._traverse import as_outputs, create_schedule, traverse_inline

__all__ = ["as_written", "check_cpu_target", "default_schedule"]

#: Target keys of accelerators pytvm has no code generator for.
_ACCELERATOR_KEYS = frozenset({"gpu", "cuda", "rocm", "opencl", "vulkan", "metal", "hls"})


def check_cpu_target(what: str) -> None:
    """Raise when the current target is not one pytvm compiles for (a CPU)."""
    target = Target.current()
    if target is None:
        return
    bad = [k for k in target.keys if k in _ACCELERATOR_KEYS]
    if bad or target.kind.name not in ("llvm", "c"):
        raise TVMValueError(
            f"{what}: no schedule for target {target} (keys {list(target.keys)}); pytvm "
            "compiles for CPUs only ('llvm' or 'c' targets)"
        )


def default_schedule(outs: Tensor | Sequence[Tensor], auto_inline: bool) -> Any:
    """A schedule of ``outs`` that keeps the computation as written; with ``auto_inline`` its
    injective stages are inlined and the first output's loops fused.

    Examples
    --------
    >>> from pytvm import te
    >>> A = te.placeholder((4, 8), name="A")
    >>> B = te.compute((4, 8), lambda i, j: A[i, j] * 2, name="B")
    >>> s = default_schedule(B, auto_inline=True)
    >>> len(s[B].leaf_iter_vars)
    1
    """
    check_cpu_target("default_schedule")
    outputs = as_outputs(outs)
    s = create_schedule(outputs)
    if auto_inline:
        traverse_inline(s, outputs)
        first = outputs[0]
        if len(first.op.axis) > 1:
            s[first].fuse(*first.op.axis)
    return s


def as_written(name: str, operator: str) -> Callable[..., Any]:
    """TVM's generic schedule ``name`` of ``operator``: ``default_schedule(outs, False)``
    (extra arguments, such as ``schedule_pool``'s layout, are accepted and not needed).
    """

    def schedule(outs: Tensor | Sequence[Tensor], *args: object) -> Any:
        return default_schedule(outs, False)

    schedule.__name__ = schedule.__qualname__ = name
    schedule.__doc__ = (
        f"Schedule of ``{operator}`` (TVM's generic default: the computation as written)."
    )
    return schedule
