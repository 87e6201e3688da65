"""TVM's pytest parametrization helpers (``tvm.testing.parameter``, ``parameters``, ``fixture``,
``parametrize_targets``, ``exclude_targets``, ``known_failing_targets``).

A parameter is a fixture defined at module level; the plugin (:mod:`pytvm.testing.plugin`)
parametrizes every test that uses it, and parameters defined together by :func:`parameters`
vary together::

    shape = tvm.testing.parameter((1, 3), (4, 5))
    dtype, atol = tvm.testing.parameters(("float32", 1e-5), ("float16", 1e-3))

    def test_add(target, dev, shape, dtype, atol): ...   # 2 x 2 tests per target
"""

from __future__ import annotations

import copy
import functools
import itertools
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

import pytest

__all__ = [
    "exclude_targets",
    "fixture",
    "known_failing_targets",
    "parameter",
    "parameters",
    "parametrize_targets",
]

_F = TypeVar("_F", bound=Callable[..., Any])
_groups = itertools.count()


def _param_fixture(values: list[Any], ids: Any, group: int) -> Any:
    def as_fixture(*_cls: Any, request: Any) -> Any:
        return request.param

    as_fixture.parametrize_group = group  # type: ignore[attr-defined]
    as_fixture.parametrize_values = values  # type: ignore[attr-defined]
    as_fixture.parametrize_ids = ids  # type: ignore[attr-defined]
    return pytest.fixture(as_fixture)


def parameter(
    *values: Any, ids: Sequence[str] | Callable[[Any], str] | None = None,
    by_dict: dict[str, Any] | None = None,
) -> Any:  # fmt: skip
    """A module-level fixture taking each of ``values`` in turn (or ``by_dict``'s values, with
    its keys as the test ids).
    """
    if by_dict is not None:
        if values or ids:
            raise RuntimeError("parameter(by_dict=...) takes no positional values or ids")
        ids, values = tuple(by_dict.keys()), tuple(by_dict.values())
    return _param_fixture(list(values), ids, next(_groups))


def parameters(*value_sets: Sequence[Any], ids: Sequence[str] | None = None) -> list[Any]:
    """One fixture per position of the tuples in ``value_sets``; they vary together."""
    if not value_sets:
        raise ValueError("parameters() needs at least one tuple of values")
    width = len(value_sets[0])
    if any(len(v) != width for v in value_sets):
        raise ValueError(f"parameters(): every tuple must have {width} values")
    group = next(_groups)
    return [_param_fixture([v[i] for v in value_sets], ids, group) for i in range(width)]


def fixture(func: Callable[..., Any] | None = None, *, cache_return_value: bool = False) -> Any:
    """``pytest.fixture``; with ``cache_return_value=True`` the value is computed once per
    combination of the fixture's arguments and each test gets a deep copy of it.
    """

    def wrap(f: Callable[..., Any]) -> Any:
        if not cache_return_value:
            return pytest.fixture(f)
        cache: dict[str, Any] = {}

        @functools.wraps(f)
        def cached(*args: Any, **kwargs: Any) -> Any:
            key = repr((args, sorted(kwargs.items())))
            if key not in cache:
                cache[key] = f(*args, **kwargs)
            return copy.deepcopy(cache[key])

        return pytest.fixture(cached)

    return wrap(func) if func is not None else wrap


def parametrize_targets(*args: Any) -> Any:
    """Run the test once per target: the given target strings, or (used bare as a decorator)
    every enabled test target. Targets that cannot run here are skipped by the plugin.
    """
    if len(args) == 1 and callable(args[0]):
        return args[0]
    return pytest.mark.parametrize("target", list(args), scope="session")


def _set_targets(attr: str, targets: Iterable[str]) -> Callable[[_F], _F]:
    def decorate(func: _F) -> _F:
        setattr(func, attr, list(targets))
        return func

    return decorate


def exclude_targets(*targets: str) -> Callable[[_F], _F]:
    """Do not run the test for these target kinds."""
    return _set_targets("tvm_excluded_targets", targets)


def known_failing_targets(*targets: str) -> Callable[[_F], _F]:
    """Mark the test as expected to fail (xfail) for these target kinds."""
    return _set_targets("tvm_known_failing_targets", targets)
