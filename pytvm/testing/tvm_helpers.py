"""TVM's ``tvm.testing`` helpers that TVM's own test files use, for running them on pytvm.

``main()``, ``assert_allclose``, ``skip_if_32bit(reason)``, ``device_enabled(name)``,
``requires_rpc`` and ``requires_llvm`` (TVM 0.18's markers).

Examples
--------
>>> from pytvm import testing
>>> testing.device_enabled("llvm") == testing.env.has_llvm(), testing.device_enabled("cuda")
(True, False)
>>> testing.assert_allclose([1.0, 2.0], [1.0, 2.0 + 1e-9])
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np
import pytest

from ..ffi.libinfo import find_cc
from .env import has_llvm

__all__ = [
    "assert_allclose",
    "device_enabled",
    "main",
    "requires_llvm",
    "requires_rpc",
    "skip_if_32bit",
]

_F = TypeVar("_F", bound=Callable[..., Any])

#: TVM 0.18's marker of tests that need RPC: pytvm always has it.
requires_rpc = pytest.mark.skipif(False, reason="pytvm always has RPC")
#: TVM 0.18's marker of tests that need the LLVM backend (``llvmlite``).
requires_llvm = pytest.mark.skipif(not has_llvm(), reason="pytvm's LLVM backend needs llvmlite")


def assert_allclose(
    actual: Any, desired: Any, rtol: float = 1e-7, atol: float = 1e-7, verbose: bool = True
) -> None:
    """``numpy.testing.assert_allclose`` with TVM's defaults, after checking the shapes agree."""
    actual, desired = np.asanyarray(actual), np.asanyarray(desired)
    np.testing.assert_allclose(actual.shape, desired.shape)
    np.testing.assert_allclose(actual, desired, rtol=rtol, atol=atol, verbose=verbose)


def skip_if_32bit(reason: str) -> Callable[[_F], _F]:
    """A decorator skipping the test on a 32-bit Python."""
    mark = pytest.mark.skipif(sys.maxsize < 2**32, reason=reason)

    def decorate(func: _F) -> _F:
        return mark(func)  # type: ignore[no-any-return]

    return decorate


def device_enabled(target: str | dict[str, Any]) -> bool:
    """Whether tests may use ``target`` here: ``cpu`` always, ``llvm`` with pytvm's LLVM
    backend, ``c`` with a C compiler; any other kind (``cuda``, ``opencl`` ...) is not enabled.
    """
    kind = target.get("kind", "") if isinstance(target, dict) else target.split(maxsplit=1)[0]
    if kind == "cpu":
        return True
    if kind == "llvm":
        return has_llvm()
    if kind == "c":
        return find_cc() is not None
    return False


def main() -> None:
    """Run the calling test file under pytest (``if __name__ == "__main__": main()``)."""
    frame = sys._getframe(1)
    test_file = inspect.getsourcefile(frame) or frame.f_code.co_filename
    sys.exit(pytest.main([test_file, *sys.argv[1:]]))
