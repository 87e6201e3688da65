"""Graph passes: a named ``(IRModule, PassContext) -> IRModule`` function with an opt level."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, overload

from ...ffi.errors import TVMTypeError
from ...tir.transform.pass_infra import PassContext, run_in_order
from ..expr import Function
from ..module import IRModule

__all__ = ["GraphPass", "PassContext", "map_functions", "sequential"]

GraphPassFunction = Callable[[IRModule, PassContext], IRModule]


@dataclass(frozen=True, slots=True, eq=False)
class GraphPass:
    """A module pass over graph IR; runs when the context's ``opt_level`` reaches ``opt_level``."""

    name: str
    opt_level: int
    fn: GraphPassFunction
    required: tuple[str, ...] = ()

    @overload
    def __call__(self) -> GraphPass: ...

    @overload
    def __call__(self, mod: IRModule, ctx: PassContext | None = None) -> IRModule: ...

    def __call__(self, mod: IRModule | None = None, ctx: PassContext | None = None) -> Any:
        """Run on ``mod`` under ``ctx`` (default: the current context); without a module it
        returns itself, so TVM's ``relay.transform.FoldConstant()(mod)`` works too.
        """
        if mod is None:
            return self
        ctx = ctx if ctx is not None else PassContext.current()
        if not isinstance(mod, IRModule):
            raise TVMTypeError(f"pass {self.name}: expected a graph IRModule, got {type(mod)}")
        if ctx.opt_level < self.opt_level and self.name not in ctx.required_pass:
            return mod
        if self.name in ctx.disabled_pass:
            return mod
        return self.fn(mod, ctx)


def sequential(
    passes: Iterable[GraphPass], mod: IRModule, ctx: PassContext | None = None
) -> IRModule:
    """Run ``passes`` in order; each pass's ``required`` names must come earlier."""
    return run_in_order(passes, mod, ctx)


def map_functions(mod: IRModule, transform: Callable[[Function], Function]) -> IRModule:
    """``mod`` with ``transform`` applied to every function (``mod`` itself if none changed)."""
    changed = {name: transform(f) for name, f in mod.functions.items()}
    if all(changed[n] is f for n, f in mod.functions.items()):
        return mod
    return IRModule(changed)
