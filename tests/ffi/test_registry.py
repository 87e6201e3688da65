from __future__ import annotations

import re
import sys
import threading
import types
from collections.abc import Iterator

import pytest

import pytvm
from pytvm.ffi import init_api


@pytest.fixture
def cleanup() -> Iterator[list[str]]:
    names: list[str] = []
    yield names
    for name in names:
        if pytvm.get_global_func(name, allow_missing=True) is not None:
            pytvm.remove_global_func(name)


def test_register_func_decorator_forms(cleanup: list[str]) -> None:
    @pytvm.register_func("testreg.named")
    def named(x: int) -> int:
        return x + 1

    @pytvm.register_func
    def testreg_unnamed(x: int) -> int:
        return x * 3

    pytvm.register_func("testreg.direct", lambda x: -x)
    cleanup += ["testreg.named", "testreg_unnamed", "testreg.direct"]
    assert named(1) == 2  # the decorator returns the Python function itself
    assert pytvm.get_global_func("testreg.named")(1) == 2
    assert pytvm.get_global_func("testreg_unnamed")(2) == 6
    assert pytvm.get_global_func("testreg.direct")(5) == -5
    assert {"testreg.named", "testreg.direct"} <= set(pytvm.list_global_func_names())


def test_register_existing_name_needs_override(cleanup: list[str]) -> None:
    pytvm.register_func("testreg.dup", lambda: 1)
    cleanup.append("testreg.dup")
    with pytest.raises(ValueError, match=re.escape("'testreg.dup' is already registered")):
        pytvm.register_func("testreg.dup", lambda: 2)
    pytvm.register_func("testreg.dup", lambda: 3, override=True)
    assert pytvm.get_global_func("testreg.dup")() == 3


def test_missing_function_error_names_it() -> None:
    with pytest.raises(AttributeError, match=re.escape("'testreg.nothing' is not registered")):
        pytvm.get_global_func("testreg.nothing")
    assert pytvm.get_global_func("testreg.nothing", allow_missing=True) is None
    with pytest.raises(AttributeError, match=re.escape("testreg.nothing")):
        pytvm.remove_global_func("testreg.nothing")


def test_remove_global_func() -> None:
    pytvm.register_func("testreg.gone", lambda: 0)
    pytvm.remove_global_func("testreg.gone")
    assert "testreg.gone" not in pytvm.list_global_func_names()


def test_registry_is_thread_safe(cleanup: list[str]) -> None:
    def worker(t: int) -> None:
        for i in range(200):
            pytvm.register_func(f"testreg.thread{t}.f{i}", lambda i=i: i)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    names = [f"testreg.thread{t}.f{i}" for t in range(8) for i in range(200)]
    cleanup += names
    registered = set(pytvm.list_global_func_names())
    assert all(name in registered for name in names)


def test_init_api_sets_direct_children(cleanup: list[str]) -> None:
    pytvm.register_func("testapi.alpha", lambda: "a")
    pytvm.register_func("testapi.nested.beta", lambda: "b")
    cleanup += ["testapi.alpha", "testapi.nested.beta"]
    module = types.ModuleType("testapi_ffi_api")
    sys.modules[module.__name__] = module
    try:
        init_api("testapi", module.__name__)
        assert module.alpha() == "a"
        assert not hasattr(module, "beta") and not hasattr(module, "nested")
    finally:
        del sys.modules[module.__name__]
