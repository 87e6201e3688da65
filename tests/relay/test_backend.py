"""``relay.backend``: TVM's Executor and Runtime configurations, and ``relay.build`` by executor."""

from __future__ import annotations

import pytest

from pytvm import relay
from pytvm.graph.aot import AOTExecutorFactoryModule
from pytvm.relay.backend import Executor, Runtime
from pytvm.relay.backend.executor_factory import GraphExecutorFactoryModule


def _add_function() -> relay.Function:
    x = relay.var("x", shape=(4,))
    y = relay.var("y", shape=(4,))
    return relay.Function([x, y], relay.add(x, y))


def test_executor_options_have_tvms_defaults() -> None:
    aot = Executor("aot", {"interface-api": "c", "unpacked-api": True})
    assert aot.name == "aot"
    assert aot["link-params"] is True  # TVM's default for AOT
    assert aot["interface-api"] == "c"
    assert aot["unpacked-api"] is True
    assert "workspace-byte-alignment" not in aot  # TVM gives no default
    assert Executor("graph")["link-params"] is False
    assert dict(Executor("graph", {"link-params": True}).attrs) == {"link-params": True}
    assert Executor.list_registered() == ["aot", "graph"]
    assert Executor.list_registered_options("aot")["workspace-byte-alignment"] == "int"


def test_runtime_options() -> None:
    crt = Runtime("crt", {"system-lib": True})
    assert crt.name == "crt"
    assert crt["system-lib"] is True
    assert dict(Runtime("cpp").attrs) == {}
    assert Runtime("crt", {"system-lib": 1})["system-lib"] is True
    assert Runtime("crt") == Runtime("crt")
    assert Runtime("crt") != Runtime("crt", {"system-lib": True})


def test_unknown_names_and_options_raise_naming_them() -> None:
    with pytest.raises(ValueError, match="executor 'vm' is not registered; choose one of"):
        Executor("vm")
    with pytest.raises(ValueError, match="executor 'aot' has no option 'unpacked_api'"):
        Executor("aot", {"unpacked_api": True})
    with pytest.raises(TypeError, match="option 'interface-api' takes a str, got bool"):
        Executor("aot", {"interface-api": True})
    with pytest.raises(TypeError, match="option 'workspace-byte-alignment' takes a int"):
        Executor("aot", {"workspace-byte-alignment": True})
    with pytest.raises(ValueError, match="runtime 'c' is not registered"):
        Runtime("c")
    with pytest.raises(ValueError, match="runtime 'crt' has no option 'system_lib'"):
        Runtime("crt", {"system_lib": True})


def test_relay_build_graph_executor_with_configurations() -> None:
    lib = relay.build(
        _add_function(), target="c", executor=Executor("graph"), runtime=Runtime("cpp")
    )
    assert isinstance(lib, GraphExecutorFactoryModule)


def test_relay_build_aot_returns_the_aot_factory() -> None:
    factory = relay.build(
        _add_function(),
        target="c",
        executor=Executor("aot", {"interface-api": "c", "unpacked-api": True}),
        runtime=Runtime("crt", {"system-lib": True}),
        mod_name="adder",
    )
    assert isinstance(factory, AOTExecutorFactoryModule)
    assert factory.mod_name == "adder"
    assert "int32_t tvmgen_adder_run(" in factory.lib.sources["adder_lib1.c"]
    assert factory.executor["unpacked-api"] is True
    assert factory.runtime.name == "crt"
    with pytest.raises(ValueError, match="no 'default' function to call here"):
        factory["default"]


def test_relay_build_aot_refuses_what_it_cannot_do() -> None:
    unlinked = Executor("aot", {"link-params": False})  # weights set at run time: refused
    with pytest.raises(ValueError, match="link-params"):
        relay.build(_add_function(), target="c", executor=unlinked, runtime=Runtime("crt"))
    c_api = Executor("aot", {"interface-api": "c", "unpacked-api": True})
    with pytest.raises(ValueError, match="use Runtime\\('crt'\\)"):
        relay.build(_add_function(), target="c", executor=c_api, runtime=Runtime("cpp"))
    with pytest.raises(ValueError, match="must be a power of two"):
        relay.build(
            _add_function(),
            target="c",
            executor=Executor(
                "aot",
                {"interface-api": "c", "unpacked-api": True, "workspace-byte-alignment": 12},
            ),
            runtime=Runtime("crt"),
        )
    with pytest.raises(ValueError, match=r"expected a relay\.backend\.Executor"):
        relay.build(_add_function(), target="c", executor=42)
