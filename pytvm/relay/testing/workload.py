"""``create_workload``: a network function and its initialized parameters (TVM's
``relay.testing.create_workload``).
"""

from __future__ import annotations

import numpy as np

from ...graph import Expr, Function, IRModule, Var
from ...graph.functor import post_order
from .init import Initializer, Xavier

__all__ = ["create_workload", "function_of"]


def function_of(body: Expr, *inputs: Var) -> Function:
    """A function of ``body`` whose parameters are ``inputs`` then every other variable
    ``body`` reads (its weights), in the order they are first read.
    """
    seen = {id(v) for v in inputs}
    params = list(inputs)
    for node in post_order(body):
        if isinstance(node, Var) and id(node) not in seen:
            seen.add(id(node))
            params.append(node)
    return Function(tuple(params), body)


def create_workload(
    net: Function | Expr, initializer: Initializer | None = None, seed: int = 0
) -> tuple[IRModule, dict[str, np.ndarray]]:
    """``(mod, params)``: ``net`` as ``mod["main"]`` and a value for each parameter but the
    first (the data), drawn by ``initializer`` (default :class:`Xavier`) from ``seed``.
    """
    func = net if isinstance(net, Function) else function_of(net)
    init = initializer if initializer is not None else Xavier()
    rng = np.random.default_rng(seed)
    params = {
        p.name: init(p.name, p.type_annotation.shape, rng)  # type: ignore[union-attr]
        for p in func.params[1:]
    }
    return IRModule.from_expr(func), params
