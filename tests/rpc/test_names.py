"""One meaning per name: no two classes of the package share a name (but the node classes the
graph and loop IRs mirror from TVM's relay and tir), no class shares a name with a public
function, and TVM's public session names keep TVM's meaning.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections import defaultdict

import pytvm
from pytvm import rpc
from pytvm.rpc.sessions.client import RPCSession
from pytvm.rpc.sessions.forwarding_session import ForwardingSession
from pytvm.rpc.sessions.local_serving_session import LocalServingSession
from pytvm.rpc.sessions.session import SessionBase


def _definitions() -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """Classes and public module-level functions of every pytvm module, by name."""
    classes: dict[str, set[str]] = defaultdict(set)
    functions: dict[str, set[str]] = defaultdict(set)
    for info in pkgutil.walk_packages(pytvm.__path__, "pytvm."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if getattr(value, "__module__", None) != module.__name__:
                continue  # imported, not defined here
            if inspect.isclass(value):
                classes[name].add(module.__name__)
            elif inspect.isfunction(value) and not name.startswith("_"):
                functions[name].add(module.__name__)
    return classes, functions


# The graph IR and the loop IR mirror TVM's relay and tir, whose node classes share these names
# (``relay.Var``/``tir.Var``; ``tvm.IRModule`` over both); each lives in exactly those modules.
_MIRRORED_IR_NAMES = {
    "Var": ["pytvm.graph.expr", "pytvm.tir.expr"],
    "Call": ["pytvm.graph.expr", "pytvm.tir.expr"],
    "IRModule": ["pytvm.graph.module", "pytvm.ir_module", "pytvm.tir.function"],
    # TVM's relay.build_module.GraphExecutor (create_executor("graph")) over pytvm's runtime one.
    "GraphExecutor": ["pytvm.relay.executor", "pytvm.runtime.graph_executor.executor"],
    # TVM's topi.nn.conv2d.Workload and topi.nn.depthwise_conv2d.Workload.
    "Workload": ["pytvm.topi.nn.conv2d", "pytvm.topi.nn.depthwise_conv2d"],
    # TVM's contrib.hexagon transport (the accelerator's channel) and tvm.micro.transport's base
    # class (how a microTVM session reaches its board).
    "Transport": ["pytvm.contrib.hexagon.transport", "pytvm.micro.transport"],
    # TVM v0.18's relay.backend.Executor (an executor's configuration for relay.build) and the
    # base class of create_executor's results (relay.backend.interpreter.Executor), and
    # autotvm.measure.executor.Executor (the base of the measuring worker pools).
    "Executor": [
        "pytvm.autotvm.measure.executor",
        "pytvm.relay.backend.executor",
        "pytvm.relay.executor",
    ],
    # TVM v0.18's tvm.micro.project_api.client.RPCError (a Project API reply that does not fit
    # its request) beside tvm.error.RPCError.
    "RPCError": ["pytvm.ffi.errors", "pytvm.micro.project_api.client"],
}


def test_no_two_classes_and_no_class_and_function_share_a_name() -> None:
    classes, functions = _definitions()
    shared = {name: sorted(mods) for name, mods in classes.items() if len(mods) > 1}
    for name, modules in _MIRRORED_IR_NAMES.items():
        if shared.get(name) == modules:
            del shared[name]
    assert shared == {}
    both = {name: sorted(classes[name] | functions[name]) for name in classes.keys() & functions}
    assert both == {}


def test_tvm_session_names_keep_their_meaning() -> None:
    assert inspect.isfunction(rpc.LocalSession)  # TVM's constructor function
    sess = rpc.LocalSession()
    assert isinstance(sess, RPCSession)
    assert isinstance(sess.session, LocalServingSession)
    assert issubclass(ForwardingSession, SessionBase)
    assert issubclass(LocalServingSession, SessionBase)


def test_former_names_still_import_as_the_renamed_classes() -> None:
    from pytvm.rpc import ClientSession, Session

    assert Session is SessionBase and ClientSession is ForwardingSession
    assert "Session" not in rpc.__all__ and "ClientSession" not in rpc.__all__
