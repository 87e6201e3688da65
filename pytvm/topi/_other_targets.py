"""TVM's per-target topi namespaces for targets pytvm does not compile for (``topi.cuda``,
``topi.gpu``, ``topi.arm_cpu``, ``topi.mali``, ...).

TVM's tests name their functions in dispatch tables built at import (``{"cpu":
topi.x86.schedule_softmax, "gpu": topi.cuda.schedule_softmax}``) and pick one by target, so
the names must resolve; calling one raises :class:`~pytvm.ffi.errors.TVMError` saying which
target pytvm lacks. Private names and the names test tools probe for raise ``AttributeError``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn

from ..ffi.errors import TVMError

__all__ = ["namespace_getattr"]

#: Names tools probe modules for (private names, pytest's hooks and test functions, unittest's
#: fixtures), which are never operators: they raise ``AttributeError`` as usual.
_NOT_OPERATORS = ("_", "pytest", "test", "setup", "teardown", "setUp", "tearDown")


def namespace_getattr(namespace: str, why: str) -> Callable[[str], Callable[..., NoReturn]]:
    """A module ``__getattr__`` for ``topi.<namespace>``: every public name is a function that
    raises, naming ``topi.<namespace>.<name>`` and ``why``.
    """

    def lookup(name: str) -> Callable[..., NoReturn]:
        if name.startswith(_NOT_OPERATORS):
            raise AttributeError(f"module 'pytvm.topi.{namespace}' has no attribute {name!r}")

        def refuse(*args: Any, **kwargs: Any) -> NoReturn:
            del args, kwargs
            raise TVMError(f"topi.{namespace}.{name}: {why}")

        refuse.__name__ = refuse.__qualname__ = name
        refuse.__module__ = f"pytvm.topi.{namespace}"
        return refuse

    return lookup
