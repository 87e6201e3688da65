"""The pytest plugin TVM's test files rely on: ``pytest_plugins = ["pytvm.testing.plugin"]``.

It provides:

- the ``target`` parameter: a test that takes ``target`` and is not parametrized over it runs
  once per enabled test target (``TVM_TEST_TARGETS``), minus ``exclude_targets``;
- the ``dev`` fixture: ``pytvm.device(target)``;
- per-target marks: a target that cannot run here is skipped with the reason, and one listed in
  ``known_failing_targets`` is expected to fail;
- :func:`pytvm.testing.parameter` / ``parameters`` values, parametrized (together when defined
  together);
- every ``requires_*`` feature's mark, declared.
"""

from __future__ import annotations

from typing import Any

import pytest

from .features import Feature
from .targets import get_targets


def pytest_configure(config: Any) -> None:
    """Declare the marks of every feature and ``gpu``."""
    for feature in Feature.all_features.values():
        feature.register_marker(config)
    config.addinivalue_line("markers", "gpu: mark a test as possibly using a GPU target")


def pytest_generate_tests(metafunc: Any) -> None:
    """Parametrize parameters, ``target`` and the per-target marks."""
    _parametrize_parameters(metafunc)
    _parametrize_target(metafunc)
    _mark_targets(metafunc)


@pytest.fixture
def dev(target: Any) -> Any:
    """The device of the test's target."""
    from ..runtime import device

    return device(str(target))


def _parametrize_parameters(metafunc: Any) -> None:
    groups: dict[int, tuple[Any, list[tuple[str, list[Any]]]]] = {}
    for name, fixturedefs in metafunc.definition._fixtureinfo.name2fixturedefs.items():
        func = fixturedefs[-1].func
        group = getattr(func, "parametrize_group", None)
        if group is None:
            continue
        ids, params = groups.setdefault(group, (func.parametrize_ids, []))
        params.append((name, func.parametrize_values))
    for ids, params in groups.values():
        names = ",".join(name for name, _ in params)
        values: list[Any] = params[0][1] if len(params) == 1 else list(zip(*[v for _, v in params]))
        metafunc.parametrize(names, values, indirect=True, ids=ids)


def _parametrize_target(metafunc: Any) -> None:
    if "target" not in metafunc.fixturenames:
        return
    already = {
        arg.strip()
        for mark in metafunc.definition.iter_markers("parametrize")
        for arg in (mark.args[0].split(",") if isinstance(mark.args[0], str) else mark.args[0])
    }
    if "target" in already:
        return
    excluded = getattr(metafunc.function, "tvm_excluded_targets", [])
    targets = [t["target"] for t in get_targets() if t["target_kind"] not in excluded]
    metafunc.definition.add_marker(pytest.mark.parametrize("target", targets, scope="session"))


def _target_marks(target: Any, failing: list[str]) -> list[Any]:
    text = str(target)
    kind = text.split(maxsplit=1)[0] if text.split() else text
    marks: list[Any] = []
    runnable = any(t["target_kind"] == kind and t["is_runnable"] for t in get_targets([text]))
    if not runnable:
        marks.append(pytest.mark.skip(reason=f"target {text!r} does not run here"))
    feature = Feature.all_features.get(kind)
    if feature is not None:
        marks.insert(0, getattr(pytest.mark, feature.name))
    if kind in failing:
        marks.append(pytest.mark.xfail(reason=f"known failing test for target {kind!r}"))
    return marks


def _mark_targets(metafunc: Any) -> None:
    if "target" not in metafunc.fixturenames:
        return
    failing = getattr(metafunc.function, "tvm_known_failing_targets", [])
    for mark in metafunc.definition.iter_markers("parametrize"):
        argnames = mark.args[0]
        names = (
            [a.strip() for a in argnames.split(",")]
            if isinstance(argnames, str)
            else list(argnames)
        )
        if "target" not in names:
            continue
        index = names.index("target")
        argvalues = mark.args[1]
        rewritten = []
        for value in argvalues:
            if isinstance(value, type(pytest.param(None))):
                values, extra = value.values, list(value.marks)
            else:
                values, extra = ((value,) if len(names) == 1 else tuple(value)), []
            marks = _target_marks(values[index], failing) + extra
            rewritten.append(pytest.param(*values, marks=marks, id=getattr(value, "id", None)))
        try:
            argvalues[:] = rewritten
        except TypeError as err:
            raise TypeError(
                f"{metafunc.function.__name__}: parametrize its targets with a list, not a tuple"
            ) from err
