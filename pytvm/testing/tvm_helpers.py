"""TVM's ``tvm.testing`` helpers that TVM's own test files use, for running them on pytvm.

``main()``, ``assert_allclose`` and ``skip_if_32bit(reason)``.

Examples
--------
>>> from pytvm import testing
>>> testing.assert_allclose([1.0, 2.0], [1.0, 2.0 + 1e-9])
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np
import pytest

__all__ = [
    "assert_allclose",
    "main",
    "skip_if_32bit",
]

_F = TypeVar("_F", bound=Callable[..., Any])


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


def main() -> None:
    """Run the calling test file under pytest (``if __name__ == "__main__": main()``)."""
    frame = sys._getframe(1)
    test_file = inspect.getsourcefile(frame) or frame.f_code.co_filename
    sys.exit(pytest.main([test_file, *sys.argv[1:]]))
