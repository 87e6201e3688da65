"""Pass records and ``PassContext``: the options a compilation runs under (TVM's ``transform``).

A pass is a pure function ``(IRModule, PassContext) -> IRModule`` plus a :class:`Pass` record
naming it. Calling the record runs the function when the context's ``opt_level`` allows it and
the pass is not disabled, then, with ``config={"tir.verify": True}``, checks the result with
:func:`pytvm.tir.verify.verify`, naming the pass that broke the IR.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType, TracebackType
from typing import Any, ClassVar, TypeVar, overload

from ...ffi.errors import TVMTypeError, TVMValueError
from ..function import IRModule, PrimFunc

__all__ = ["Pass", "PassContext", "PassFunction", "map_functions", "run_in_order", "sequential"]

#: The signature of every pass.
PassFunction = Callable[[IRModule, "PassContext"], IRModule]

_DEFAULT_OPT_LEVEL = 2
_MAX_OPT_LEVEL = 4


@dataclass(frozen=True, slots=True, eq=False)
class PassContext:
    """Options of one compilation: optimisation level, passes forced on or off, pass config.

    Parameters
    ----------
    opt_level
        Passes whose ``opt_level`` is above this are skipped (0 to 4; default 2).
    required_pass
        Names of passes that run whatever the level.
    disabled_pass
        Names of passes that never run.
    config
        Pass options by key, e.g. ``{"tir.disable_vectorize": True}``,
        ``{"tir.UnrollLoop": {"auto_max_step": 16}}``, ``{"tir.verify": True}``.

    Examples
    --------
    >>> from pytvm.tir.transform import PassContext
    >>> with PassContext(opt_level=3, config={"tir.disable_vectorize": True}):
    ...     PassContext.current().config["tir.disable_vectorize"]
    True
    >>> PassContext.current().opt_level
    2
    """

    opt_level: int = _DEFAULT_OPT_LEVEL
    required_pass: tuple[str, ...] = ()
    disabled_pass: tuple[str, ...] = ()
    config: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    _stack: ClassVar[list[PassContext]] = []

    def __post_init__(self) -> None:
        if not isinstance(self.opt_level, int) or not 0 <= self.opt_level <= _MAX_OPT_LEVEL:
            raise TVMValueError(
                f"PassContext: opt_level must be an integer from 0 to {_MAX_OPT_LEVEL}, "
                f"got {self.opt_level!r}"
            )
        if not isinstance(self.config, Mapping):
            raise TVMTypeError(
                f"PassContext: config must be a mapping of option names, got "
                f"{type(self.config).__name__}"
            )
        object.__setattr__(self, "required_pass", tuple(self.required_pass))
        object.__setattr__(self, "disabled_pass", tuple(self.disabled_pass))
        object.__setattr__(self, "config", MappingProxyType(dict(self.config)))

    @staticmethod
    def current() -> PassContext:
        """The innermost context entered with ``with`` (a default one outside any)."""
        return PassContext._stack[-1] if PassContext._stack else _DEFAULT

    def __enter__(self) -> PassContext:
        PassContext._stack.append(self)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        PassContext._stack.pop()

    def get(self, key: str, default: Any = None) -> Any:
        """The config option ``key`` (``default`` when unset)."""
        return self.config.get(key, default)

    def enabled(self, p: Pass) -> bool:
        """Whether ``p`` runs under this context."""
        if p.name in self.disabled_pass:
            return False
        return p.opt_level <= self.opt_level or p.name in self.required_pass

    @property
    def verify(self) -> bool:
        """Whether the IR is checked after every pass (``config["tir.verify"]``)."""
        return bool(self.config.get("tir.verify", False))


_DEFAULT = PassContext()


@dataclass(frozen=True, slots=True, eq=False)
class Pass:
    """A named module pass: ``fn`` runs when ``opt_level`` is reached; ``required`` lists the
    passes that must have run before it (checked by the pipeline).
    """

    name: str
    opt_level: int
    fn: PassFunction
    required: tuple[str, ...] = ()

    @overload
    def __call__(self) -> Pass: ...

    @overload
    def __call__(self, mod: IRModule, ctx: PassContext | None = None) -> IRModule: ...

    def __call__(self, mod: IRModule | None = None, ctx: PassContext | None = None) -> Any:
        """Run the pass on ``mod`` under ``ctx`` (default: the current context).

        Called without a module it returns itself, so TVM's ``Simplify()(mod)`` works too.
        """
        if mod is None:
            return self
        ctx = ctx if ctx is not None else PassContext.current()
        if not isinstance(mod, IRModule):
            raise TVMTypeError(
                f"pass {self.name}: expected an IRModule, got {type(mod).__name__}; wrap a "
                "PrimFunc with IRModule.from_expr(func)"
            )
        if not ctx.enabled(self):
            return mod
        out = self.fn(mod, ctx)
        if ctx.verify:
            from ..verify import verify

            verify(out, stage=self.name)
        return out


def sequential(passes: Iterable[Pass], mod: IRModule, ctx: PassContext | None = None) -> IRModule:
    """Run ``passes`` in order on ``mod``; each pass's ``required`` names must come earlier."""
    return run_in_order(passes, mod, ctx)


_Module = TypeVar("_Module")


def run_in_order(passes: Iterable[Any], mod: _Module, ctx: PassContext | None = None) -> _Module:
    """Run ``passes`` (of any IR: each has ``name``, ``required`` and is called with the module
    and the context) in order; each pass's ``required`` names must come earlier.
    """
    ctx = ctx if ctx is not None else PassContext.current()
    done: set[str] = set()
    for p in passes:
        missing = [r for r in p.required if r not in done]
        if missing:
            raise TVMValueError(f"pass {p.name} needs {missing} to come before it in the pass list")
        mod = p(mod, ctx)
        done.add(p.name)
    return mod


def map_functions(mod: IRModule, transform: Callable[[PrimFunc], PrimFunc]) -> IRModule:
    """``mod`` with ``transform`` applied to every function (``mod`` itself if none changed)."""
    changed = {name: transform(func) for name, func in mod.items()}
    if all(changed[name] is func for name, func in mod.items()):
        return mod
    return IRModule(changed, mod.attrs)
