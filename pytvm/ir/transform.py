"""TVM's ``tvm.ir.transform``: the pass infrastructure of both IRs (loop IR and graph IR).

A pass is a pure function ``(IRModule, PassContext) -> IRModule`` that never changes its input,
plus a :class:`Pass` record naming it (``name``, ``opt_level``, ``required``). Calling the record
runs the function when the context allows it: its ``opt_level`` is reached (or the pass is in
``required_pass``), it is not in ``disabled_pass``, and no instrument's ``should_run`` says no.
With ``config={"tir.verify": True}`` the result is checked after every pass
(:meth:`pytvm.ir.module.IRModuleBase.verify`: the loop IR's verifier, naming the pass that broke
the IR). :func:`sequential` (and the :class:`Sequential` pass) run passes in order, checking that
each pass's ``required`` names come earlier.

Examples
--------
>>> from pytvm.ir import transform
>>> with transform.PassContext(opt_level=3):
...     transform.PassContext.current().opt_level
3
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar, Generic, TypeVar, overload

from ..ffi.errors import TVMTypeError, TVMValueError
from .module import IRModuleBase

__all__ = [
    "Pass",
    "PassContext",
    "PassFunction",
    "PassInstrument",
    "Sequential",
    "map_functions",
    "sequential",
]

M = TypeVar("M", bound=IRModuleBase[Any])

#: The signature of every pass.
PassFunction = Callable[[M, "PassContext"], M]

_DEFAULT_OPT_LEVEL = 2
_MAX_OPT_LEVEL = 4


class PassInstrument:
    """Hooks called around passes (TVM's ``PassInstrument``); subclass and override any of them.

    ``enter_pass_ctx`` / ``exit_pass_ctx`` run when the :class:`PassContext` holding the
    instrument is entered and left; ``should_run`` can skip a pass; ``run_before_pass`` and
    ``run_after_pass`` see the module before and after each pass that runs. ``info`` is the
    :class:`Pass` record (``name``, ``opt_level``, ``required``).

    Examples
    --------
    >>> class Names(PassInstrument):
    ...     def __init__(self) -> None:
    ...         self.seen: list[str] = []
    ...     def run_before_pass(self, mod: Any, info: Any) -> None:
    ...         self.seen.append(info.name)
    >>> names = Names()
    >>> with PassContext(instruments=[names]):
    ...     pass
    >>> names.seen
    []
    """

    def enter_pass_ctx(self) -> None:
        """Called when a context holding this instrument is entered."""

    def exit_pass_ctx(self) -> None:
        """Called when a context holding this instrument is left."""

    def should_run(self, mod: Any, info: Any) -> bool:
        """Whether the pass ``info`` runs on ``mod`` (default: yes)."""
        del mod, info
        return True

    def run_before_pass(self, mod: Any, info: Any) -> None:
        """Called before the pass ``info`` runs on ``mod``."""

    def run_after_pass(self, mod: Any, info: Any) -> None:
        """Called with the result ``mod`` of the pass ``info``."""


@dataclass(frozen=True, slots=True, eq=False)
class PassContext:
    """Options of one compilation: optimisation level, passes forced on or off, instruments,
    pass config.

    Parameters
    ----------
    opt_level
        Passes whose ``opt_level`` is above this are skipped (0 to 4; default 2).
    required_pass
        Names of passes that run whatever the level.
    disabled_pass
        Names of passes that never run.
    instruments
        :class:`PassInstrument` objects called around every pass.
    config
        Pass options by key, e.g. ``{"tir.disable_vectorize": True}``,
        ``{"tir.UnrollLoop": {"auto_max_step": 16}}``, ``{"tir.verify": True}``,
        ``{"graph.max_constant_bytes": 1 << 20}``.

    Examples
    --------
    >>> from pytvm.ir.transform import PassContext
    >>> with PassContext(opt_level=3, config={"tir.disable_vectorize": True}):
    ...     PassContext.current().config["tir.disable_vectorize"]
    True
    >>> PassContext.current().opt_level
    2
    """

    opt_level: int = _DEFAULT_OPT_LEVEL
    required_pass: Sequence[str] = ()
    disabled_pass: Sequence[str] = ()
    instruments: Sequence[PassInstrument] = ()
    config: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    _stack: ClassVar[list[PassContext]] = []

    def __post_init__(self) -> None:
        if not isinstance(self.opt_level, int) or not 0 <= self.opt_level <= _MAX_OPT_LEVEL:
            raise TVMValueError(
                f"PassContext: opt_level must be an integer from 0 to {_MAX_OPT_LEVEL}, "
                f"got {self.opt_level!r}"
            )
        config = {} if self.config is None else self.config
        if not isinstance(config, Mapping):
            raise TVMTypeError(
                f"PassContext: config must be a mapping of option names, got "
                f"{type(self.config).__name__}"
            )
        object.__setattr__(self, "required_pass", tuple(self.required_pass or ()))
        object.__setattr__(self, "disabled_pass", tuple(self.disabled_pass or ()))
        object.__setattr__(self, "instruments", tuple(self.instruments or ()))
        object.__setattr__(self, "config", MappingProxyType(dict(config)))

    @staticmethod
    def current() -> PassContext:
        """The innermost context entered with ``with`` (a default one outside any)."""
        return PassContext._stack[-1] if PassContext._stack else _DEFAULT

    def __enter__(self) -> PassContext:
        for inst in self.instruments:
            inst.enter_pass_ctx()
        PassContext._stack.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        PassContext._stack.pop()
        for inst in self.instruments:
            inst.exit_pass_ctx()

    def get(self, key: str, default: Any = None) -> Any:
        """The config option ``key`` (``default`` when unset)."""
        return self.config.get(key, default)

    def enabled(self, p: Pass[Any]) -> bool:
        """Whether ``p`` runs under this context (level and lists; instruments aside)."""
        if p.name in self.disabled_pass:
            return False
        return p.opt_level <= self.opt_level or p.name in self.required_pass

    @property
    def verify(self) -> bool:
        """Whether the IR is checked after every pass (``config["tir.verify"]``)."""
        return bool(self.config.get("tir.verify", False))


_DEFAULT = PassContext()


@dataclass(frozen=True, slots=True, eq=False)
class Pass(Generic[M]):
    """A named module pass: ``fn`` runs when ``opt_level`` is reached; ``required`` lists the
    passes that must have run before it (checked by :func:`sequential`).
    """

    name: str
    opt_level: int
    fn: Callable[[M, PassContext], M]
    required: tuple[str, ...] = ()

    @property
    def info(self) -> Pass[M]:
        """TVM's ``Pass.info``: the record itself (``name``, ``opt_level``, ``required``)."""
        return self

    @overload
    def __call__(self) -> Pass[M]: ...

    @overload
    def __call__(self, mod: M, ctx: PassContext | None = None) -> M: ...

    def __call__(self, mod: M | None = None, ctx: PassContext | None = None) -> Any:
        """Run the pass on ``mod`` under ``ctx`` (default: the current context).

        Called without a module it returns itself, so TVM's ``Simplify()(mod)`` works too.
        """
        if mod is None:
            return self
        ctx = ctx if ctx is not None else PassContext.current()
        if not isinstance(mod, IRModuleBase):
            raise TVMTypeError(
                f"pass {self.name}: expected an IRModule, got {type(mod).__name__}; wrap a "
                "function with IRModule.from_expr(func)"
            )
        if not ctx.enabled(self) or not all(i.should_run(mod, self) for i in ctx.instruments):
            return mod
        for inst in ctx.instruments:
            inst.run_before_pass(mod, self)
        out = self.fn(mod, ctx)
        if ctx.verify:
            out.verify(stage=self.name)
        for inst in ctx.instruments:
            inst.run_after_pass(out, self)
        return out


def sequential(passes: Iterable[Pass[M]], mod: M, ctx: PassContext | None = None) -> M:
    """Run ``passes`` in order on ``mod``; each pass's ``required`` names must come earlier."""
    ctx = ctx if ctx is not None else PassContext.current()
    done: set[str] = set()
    for p in passes:
        missing = [r for r in p.required if r not in done]
        if missing:
            raise TVMValueError(f"pass {p.name} needs {missing} to come before it in the pass list")
        mod = p(mod, ctx)
        done.add(p.name)
    return mod


def Sequential(
    passes: Sequence[Pass[M]],
    opt_level: int = 0,
    name: str = "sequential",
    required: Sequence[str] = (),
) -> Pass[M]:
    """TVM's ``Sequential``: one :class:`Pass` that runs ``passes`` in order (each still
    subject to the context), itself run from ``opt_level``.
    """
    steps = tuple(passes)

    def run(mod: M, ctx: PassContext) -> M:
        return sequential(steps, mod, ctx)

    return Pass(name, opt_level, run, tuple(required))


def map_functions(mod: M, transform: Callable[[Any], Any]) -> M:
    """``mod`` with ``transform`` applied to every function (``mod`` itself if none changed)."""
    return mod.map_functions(transform)
