"""TVM v0.18's ``tvm.micro.testing.aot_test_utils``: the AOT test runners and the grid of
interface options that TVM's AOT tests are parametrized over.

``parametrize_aot_options`` gives each test ``interface_api`` (``"packed"``, ``"c"``),
``use_unpacked_api`` (True, False) and ``test_runner`` (this machine; the Corstone-300 FVP,
skipped where it is missing), without the combination the C interface rejects
(``"c"`` with the packed API).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any, TypeVar

import pytest

from ...testing.aot import AOTTestRunner
from ...testing.features import requires_corstone300

__all__ = ["AOT_CORSTONE300_RUNNER", "AOT_DEFAULT_RUNNER", "parametrize_aot_options"]

_F = TypeVar("_F", bound=Callable[..., Any])

#: Runs the test program on this machine.
AOT_DEFAULT_RUNNER = AOTTestRunner()

#: The Arm Corstone-300 FVP (a Cortex-M55 with Ethos-U55); pytvm has no FVP, so tests with it
#: are skipped (``tvm.testing.requires_corstone300``).
AOT_CORSTONE300_RUNNER = AOTTestRunner(
    makefile="corstone300",
    prologue="uart_init();",
    includes=["uart_stdout.h"],
    pass_config={"relay.ext.cmsisnn.options": {"mcpu": "cortex-m55"}},
)


def parametrize_aot_options(test: _F) -> _F:
    """Parametrize ``test`` over ``interface_api``, ``use_unpacked_api`` and ``test_runner``."""
    cases = []
    for api, unpacked, runner in itertools.product(
        ("packed", "c"), (True, False), (AOT_DEFAULT_RUNNER, AOT_CORSTONE300_RUNNER)
    ):
        if api == "c" and not unpacked:
            continue  # the C interface needs the unpacked API
        marks = requires_corstone300.marks() if runner is AOT_CORSTONE300_RUNNER else []
        ident = f"{api}-{'unpacked' if unpacked else 'packed'}-{runner.makefile}"
        cases.append(pytest.param(api, unpacked, runner, marks=marks, id=ident))
    decorate = pytest.mark.parametrize(["interface_api", "use_unpacked_api", "test_runner"], cases)
    return decorate(test)  # type: ignore[no-any-return]
