"""TVM 0.27's ``tvm.testing.env`` probes, answered for pytvm (``from tvm.testing import env``).

Examples
--------
>>> from pytvm.testing import env
>>> env.build_flag_enabled("USE_RPC"), env.build_flag_enabled("USE_CUDA")
(True, False)
"""

from __future__ import annotations

import functools
import importlib

__all__ = ["build_flag_enabled", "has_llvm"]


@functools.cache
def has_llvm() -> bool:
    """Whether pytvm's LLVM backend can run here (``llvmlite`` imports)."""
    try:
        importlib.import_module("llvmlite.binding")
    except ImportError:
        return False
    return True


def build_flag_enabled(flag: str) -> bool:
    """Whether TVM's build flag ``flag`` describes pytvm: ``USE_RPC`` always, ``USE_LLVM`` when
    :func:`has_llvm`; every other flag (``USE_CUDA``, ``USE_CUTLASS`` ...) is off.
    """
    if flag == "USE_RPC":
        return True
    if flag == "USE_LLVM":
        return has_llvm()
    return False
