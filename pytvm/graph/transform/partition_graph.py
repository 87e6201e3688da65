"""PartitionGraph: calls an external compiler supports become functions it compiles (BYOC).

Each call ``supported(call)`` accepts is wrapped in ``fn(params) {op(params)}`` with attributes
``Compiler=<compiler>``, ``global_symbol=<compiler>_<n>`` and ``Primitive=1``; the build hands
such a function to the global function ``relay.ext.<compiler>``, which returns a runtime module
exporting ``global_symbol`` (see :mod:`pytvm.graph.compile_engine`).
"""

from __future__ import annotations

from collections.abc import Callable

from ..attrs import Attrs
from ..expr import Call, Expr, Function, Var
from ..functor import rewrite_function
from ..module import IRModule

__all__ = ["partition_graph"]


def partition_graph(mod: IRModule, compiler: str, supported: Callable[[Call], bool]) -> IRModule:
    """``mod`` with every call ``supported`` accepts offloaded to ``compiler``."""
    count = 0

    def offload(node: Expr) -> Expr | None:
        nonlocal count
        if not (isinstance(node, Call) and isinstance(node.op, str) and supported(node)):
            return None
        params = [Var(f"{compiler}_{count}_i{i}", a.checked_type) for i, a in enumerate(node.args)]
        body = Call(node.op, tuple(params), node.attrs, node.name)
        symbol = f"{compiler}_{count}"
        count += 1
        attrs = Attrs.of(Compiler=compiler, global_symbol=symbol, Primitive=1)
        return Call(Function(params, body, attrs), node.args, name=node.name or symbol)

    return IRModule({n: rewrite_function(f, offload) for n, f in mod.functions.items()})
