"""Picking a target's compute and schedule in topi tests (TVM's ``topi.testing.common``).

A dispatch map names implementations by target key (``"generic"``, ``"cpu"``, ``"arm_cpu"``,
``"gpu"``, ...). :func:`dispatch` returns the entry of the first of the target's keys the map
has, else the ``"generic"`` entry, as TVM does. pytvm compiles for CPUs only, so its own maps
hold ``"generic"`` and ``"cpu"`` entries, and a target with a GPU key is an error rather than a
silent CPU schedule.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from ...ffi.errors import TVMKeyError, TVMTypeError, TVMValueError
from ...target import Target
from .. import generic, nn, x86

__all__ = [
    "compare_numpy_tvm",
    "dispatch",
    "get_broadcast_schedule",
    "get_conv2d_nchw_implement",
    "get_conv2d_nhwc_implement",
    "get_elemwise_schedule",
    "get_injective_schedule",
    "get_reduce_schedule",
]

T = TypeVar("T")
Schedule = Callable[..., Any]

#: Target keys of accelerators pytvm has no code generator for.
_GPU_KEYS = frozenset(
    {"gpu", "cuda", "rocm", "opencl", "vulkan", "metal", "mali", "bifrost", "adreno",
     "intel_graphics", "hls", "webgpu", "nvptx"}
)  # fmt: skip

_injective_schedule: dict[str, Schedule] = {
    "generic": generic.schedule_injective,
    "cpu": x86.schedule_injective,
}

_reduce_schedule: dict[str, Schedule] = {
    "generic": generic.schedule_reduce,
    "cpu": x86.schedule_reduce,
}

_conv2d_nchw_implement: dict[str, tuple[Callable[..., Any], Schedule]] = {
    "generic": (nn.conv2d_nchw, generic.schedule_conv2d_nchw),
    "cpu": (x86.conv2d_nchw, x86.schedule_conv2d_nchw),
}

_conv2d_nhwc_implement: dict[str, tuple[Callable[..., Any], Schedule]] = {
    "generic": (x86.conv2d_nhwc, generic.schedule_conv2d_nhwc),
    "cpu": (x86.conv2d_nhwc, x86.schedule_conv2d_nhwc),
}


def dispatch(target: Target | str, dispatch_map: Mapping[str, T]) -> T:
    """The entry of ``dispatch_map`` for ``target``: the first of the target's keys the map
    has, else ``"generic"``.

    Examples
    --------
    >>> dispatch("llvm", {"generic": "naive", "cpu": "x86"})
    'x86'
    """
    if isinstance(target, str):
        target = Target(target)
    if not isinstance(target, Target):
        raise TVMTypeError(
            f"dispatch: target {target!r} ({type(target).__name__}); expected a Target or a "
            "target string such as 'llvm'"
        )
    for key in target.keys:
        if key in _GPU_KEYS:
            raise TVMValueError(
                f"dispatch: target {target} has key {key!r}; pytvm compiles for CPUs only, so "
                "it has no schedule for it (use an 'llvm' or 'c' target)"
            )
        if key in dispatch_map:
            return dispatch_map[key]
    if "generic" not in dispatch_map:
        raise TVMKeyError(
            f"dispatch: no entry for target {target} (keys {list(target.keys)}) and no "
            f"'generic' entry; the map has {sorted(dispatch_map)}"
        )
    return dispatch_map["generic"]


def get_injective_schedule(target: Target | str) -> Schedule:
    """The injective schedule of ``target``."""
    return dispatch(target, _injective_schedule)


def get_reduce_schedule(target: Target | str) -> Schedule:
    """The reduction schedule of ``target``."""
    return dispatch(target, _reduce_schedule)


#: Broadcast and elementwise operators use the injective schedule, as in TVM.
get_broadcast_schedule = get_injective_schedule
get_elemwise_schedule = get_injective_schedule


def get_conv2d_nchw_implement(target: Target | str) -> tuple[Callable[..., Any], Schedule]:
    """``(compute, schedule)`` of an NCHW convolution for ``target``."""
    return dispatch(target, _conv2d_nchw_implement)


def get_conv2d_nhwc_implement(target: Target | str) -> tuple[Callable[..., Any], Schedule]:
    """``(compute, schedule)`` of an NHWC convolution for ``target``."""
    return dispatch(target, _conv2d_nhwc_implement)


def compare_numpy_tvm(
    inputs: list[Any],
    output: Any,
    target: Target | str,
    device: Any,
    compute: Callable[..., Any],
    schedule: Schedule,
) -> None:
    """Build ``compute`` over placeholders shaped like the numpy ``inputs`` with ``schedule``
    for ``target``, run it on ``device`` and check its result against ``output`` (1e-4).
    """
    import numpy as np

    from ... import build, nd, te
    from ...testing import assert_allclose

    placeholders = [te.placeholder(shape=x.shape, dtype=str(x.dtype)) for x in inputs]
    result = nd.array(np.zeros(output.shape, dtype=output.dtype), device=device)
    with Target(target) if isinstance(target, str) else target:
        out = compute(*placeholders)
        func = build(schedule([out]), [*placeholders, out])
    func(*[nd.array(x, device=device) for x in inputs], result)
    assert_allclose(result.numpy(), output, atol=1e-4, rtol=1e-4)
