"""Specializing ONNX models whose shapes depend on graph inputs' values or run-time shapes.

pytvm's graph IR is static: every shape is known when a function is built. An ONNX model may
compute a shape, axes, pads or sizes from a graph input's *value* (``Reshape`` with ``shape``
as an input, ``ReduceSum`` with ``axes``, ``Resize`` with ``sizes``...), which TVM handles
with dynamic shapes in its VM. pytvm specializes instead, as a JIT does:

* ``from_onnx`` on such a model returns a :class:`ValueSpecializedModule` whose ``main`` (a
  :class:`ValueSpecializedFunction`) records the model, the import's options and the *value
  inputs*: the graph inputs that shapes or attributes are computed from. Its ``params`` are
  the graph inputs and weights, typed as a static import types them.
* Running it (``relay.create_executor(kind, mod).evaluate()(*inputs)``) imports the model with
  the value inputs' values given at that call bound as constants, compiles the static function
  that results, and runs it on the other inputs. The result is what a static import of the
  model with those constants gives. The import and the compiled function are cached by the
  values (an exact digest of each value's dtype, shape and bytes): a second call with the same
  values reuses them, other values import and compile again. An import at call time may find
  further value inputs (a later node needs another input's value); they join the value inputs.
* What needs the graph without values raises :class:`ValueInputsRequiredError`, naming the value
  inputs and how to give them (``relay.build`` without them, the module's text, ``main``'s
  body or type).
* Inputs whose dimensions are known only at run time (``relay.Any()`` in ``shape_dict``, a
  symbolic dimension the ``shape_dict`` leaves; :mod:`.run_time_shapes`) are specialized the
  same way, by the shapes each call gives; without them :class:`ShapeInputsRequiredError`.

Two imports of the same model with the same options share one :class:`Specializer` (interned
by a digest of the serialized model and the options), so they compare structurally equal and
share their caches.
"""

from __future__ import annotations

import hashlib
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, TypeVar

import numpy as np

from ...graph import Function, IRModule, Var
from ...graph.ty import TensorType
from ...ir.module import IRModuleBase
from .errors import DynamicValueError, OnnxImportError
from .run_time_shapes import PartialTensorType, RunTimeVar

__all__ = [
    "ShapeInputsRequiredError",
    "Specialization",
    "Specializer",
    "ValueInputsRequiredError",
    "ValueSpecializedFunction",
    "ValueSpecializedModule",
    "intern_specializer",
    "values_key",
]

#: How many specializations (imports, and compiled functions) each model keeps, least recently
#: used first out.
CACHE_ENTRIES = 32

T = TypeVar("T")

#: A static import of the model with some graph inputs bound to values and some inputs'
#: shapes given: ``(module, params)``.
ImportFunction = Callable[
    [Mapping[str, np.ndarray], Mapping[str, tuple[int, ...]]],
    tuple[IRModule, dict[str, np.ndarray]],
]


class ValueInputsRequiredError(DynamicValueError):
    """The graph of a model whose shapes depend on the values of graph inputs was asked for
    without those values; ``graph_inputs`` names the value inputs missing.
    """

    def __init__(self, what: str, missing: Sequence[str], reason: str) -> None:
        names = sorted(missing)
        super().__init__(
            f"{what}: the model's shapes depend on the values of graph input(s) {names}, which "
            f"are not given ({reason}). Give them as constants: make them initializers of the "
            "model (from_onnx binds initializers), pass their values to relay.build(mod, "
            f"params={{{names[0]!r}: value, ...}}), or run the model with "
            "relay.create_executor('vm' or 'graph', mod).evaluate()(*inputs), which compiles it "
            "for the values each call gives",
            names,
        )


class ShapeInputsRequiredError(OnnxImportError):
    """The graph of a model with input dimensions known only at run time was asked for
    without those inputs' shapes; ``graph_inputs`` names the inputs.
    """

    def __init__(self, what: str, missing: Sequence[str], reason: str) -> None:
        self.graph_inputs = sorted(missing)
        super().__init__(
            f"{what}: graph input(s) {self.graph_inputs} have dimensions known only at run "
            f"time ({reason}). Give their static shapes in from_onnx's shape_dict, or run the "
            "model with relay.create_executor('vm' or 'graph', mod).evaluate()(*inputs), which "
            "compiles it for the shapes each call gives"
        )


def values_key(values: Mapping[str, np.ndarray]) -> tuple[Hashable, ...]:
    """An exact key of ``values`` (name, dtype, shape and a SHA-256 of the bytes, by name)."""
    key = []
    for name in sorted(values):
        arr = np.ascontiguousarray(values[name])
        digest = hashlib.sha256(arr.tobytes()).hexdigest()
        key.append((name, str(arr.dtype), tuple(arr.shape), digest))
    return tuple(key)


@dataclass(frozen=True, slots=True)
class Specialization:
    """The model imported with ``values`` bound and ``shapes`` given: ``func`` is static,
    ``params`` its weights.
    """

    key: tuple[Hashable, ...]
    values: Mapping[str, np.ndarray]
    shapes: Mapping[str, tuple[int, ...]]
    func: Function
    params: Mapping[str, np.ndarray]


class Specializer:
    """One model and import's options: the value inputs, the inputs whose shapes are known
    only at run time (``shape_inputs``), and the imports and compiled functions made for their
    values and shapes (LRU caches of :data:`CACHE_ENTRIES` entries each).
    """

    def __init__(
        self,
        import_fn: ImportFunction,
        inputs: Sequence[Var | RunTimeVar],
        value_inputs: Sequence[str],
        reason: str,
        shape_inputs: Sequence[str] = (),
    ) -> None:
        self._import = import_fn
        self.inputs = tuple(inputs)
        self._types = {v.name: v.type_annotation for v in self.inputs}
        self._value_inputs = list(value_inputs)
        self.shape_inputs = tuple(shape_inputs)
        #: Why the model is specialized: which node needs which input's value, or which
        #: inputs have dimensions known only at run time.
        self.reason = reason
        self._lock = threading.RLock()
        self._imports: OrderedDict[tuple[Hashable, ...], Specialization] = OrderedDict()
        self._compiled: OrderedDict[Hashable, Any] = OrderedDict()

    @property
    def value_inputs(self) -> tuple[str, ...]:
        """The graph inputs whose values the import needs (grows when an import finds more)."""
        with self._lock:
            return tuple(self._value_inputs)

    def cache_sizes(self) -> tuple[int, int]:
        """How many imports and compiled functions are cached (for tests and debugging)."""
        with self._lock:
            return len(self._imports), len(self._compiled)

    def check_value(self, name: str, value: Any) -> np.ndarray:
        """``value`` as a read-only copy, checked to have graph input ``name``'s declared
        dtype and shape (the caller may change its array after the call; the copy stays).
        """
        arr = np.array(value.numpy() if hasattr(value, "numpy") else value, copy=True)
        arr.flags.writeable = False
        self.check_type(name, arr.shape, str(arr.dtype))
        return arr

    def check_type(self, name: str, shape: Sequence[int], dtype: str) -> None:
        """Raise unless a tensor of ``shape`` and ``dtype`` fits graph input ``name``."""
        ty = self._types.get(name)
        if isinstance(ty, TensorType):
            fits = tuple(shape) == ty.shape and dtype == ty.dtype
        elif isinstance(ty, PartialTensorType):
            fits = ty.accepts(shape, dtype)
        else:
            return
        if not fits:
            raise DynamicValueError(
                f"graph input {name!r} expects a {ty.dtype} tensor of shape {ty.shape}, got "
                f"{dtype} of shape {tuple(shape)}",
                [name],
            )

    def _shapes(self, available: Mapping[str, Any], what: str) -> dict[str, tuple[int, ...]]:
        missing = [n for n in self.shape_inputs if n not in available]
        if missing:
            raise ShapeInputsRequiredError(what, missing, self.reason)
        shapes = {}
        for name in self.shape_inputs:
            value = available[name]
            shape = tuple(int(d) for d in np.shape(value))
            self.check_type(name, shape, str(getattr(value, "dtype", np.asarray(value).dtype)))
            shapes[name] = shape
        return shapes

    def specialize(self, available: Mapping[str, Any], what: str) -> Specialization:
        """The model imported with the value inputs bound to their values in ``available``
        (graph inputs by name) and the shape inputs given their shapes; cached by those values
        and shapes. ``what`` names the caller in errors.
        """
        shapes = self._shapes(available, what)
        with self._lock:
            while True:
                missing = [n for n in self._value_inputs if n not in available]
                if missing:
                    raise ValueInputsRequiredError(what, missing, self.reason)
                bound = {n: self.check_value(n, available[n]) for n in self._value_inputs}
                key = (*values_key(bound), *sorted(shapes.items()))
                hit = self._imports.get(key)
                if hit is not None:
                    self._imports.move_to_end(key)
                    return hit
                try:
                    mod, params = self._import(bound, shapes)
                except DynamicValueError as err:
                    new = [n for n in err.graph_inputs if n in self._types and n not in bound]
                    if not new:
                        raise
                    self._value_inputs.extend(new)  # found another value input: bind it too
                    continue
                frozen = MappingProxyType(bound)
                spec = Specialization(key, frozen, MappingProxyType(shapes), mod["main"], params)
                _remember(self._imports, key, spec)
                return spec

    def compiled(self, key: Hashable, make: Callable[[], T]) -> T:
        """The compiled function cached under ``key`` (made by ``make`` on a miss)."""
        with self._lock:
            if key in self._compiled:
                self._compiled.move_to_end(key)
                return self._compiled[key]  # type: ignore[no-any-return]
            made = make()
            _remember(self._compiled, key, made)
            return made


def _remember(cache: OrderedDict[Any, Any], key: Any, value: Any) -> None:
    cache[key] = value
    while len(cache) > CACHE_ENTRIES:
        cache.popitem(last=False)


_INTERNED: weakref.WeakValueDictionary[Hashable, Specializer] = weakref.WeakValueDictionary()
_INTERN_LOCK = threading.Lock()


def intern_specializer(key: Hashable, make: Callable[[], Specializer]) -> Specializer:
    """The live :class:`Specializer` of ``key`` (a model's digest and import options), or a new
    one made by ``make``: two imports of one model share their value inputs and caches.
    """
    with _INTERN_LOCK:
        found = _INTERNED.get(key)
        if found is None:
            found = make()
            _INTERNED[key] = found
        return found


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class ValueSpecializedFunction:
    """``main`` of a model whose shapes depend on the values of graph inputs: its ``params``
    (the graph inputs, then the weights) and how to import it for given values; it has no
    body until those values are given (:meth:`specialize`).

    ``fixed`` holds values bound ahead of the call (``create_executor(params=...)``,
    ``evaluate(binds=...)``); those inputs are no longer parameters.
    """

    inputs: tuple[Var | RunTimeVar, ...]
    specializer: Specializer
    fixed: Mapping[str, np.ndarray] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def params(self) -> tuple[Var | RunTimeVar, ...]:
        """The parameters still to be given at a call (graph inputs, then weights)."""
        return tuple(v for v in self.inputs if v.name not in self.fixed)

    @property
    def value_inputs(self) -> tuple[str, ...]:
        """The graph inputs whose values decide the model's shapes."""
        return self.specializer.value_inputs

    def required_error(self, what: str) -> OnnxImportError:
        """The error for ``what`` (a caller) needing the graph without the values or shapes:
        it names the inputs not fixed and how to give them.
        """
        reason = self.specializer.reason
        shapes = [n for n in self.specializer.shape_inputs if n not in self.fixed]
        if shapes:
            return ShapeInputsRequiredError(what, shapes, reason)
        missing = [n for n in self.value_inputs if n not in self.fixed]
        return ValueInputsRequiredError(what, missing, reason)

    @property
    def body(self) -> Any:
        """Refused: the body exists only for given values (:meth:`specialize`)."""
        raise self.required_error("the graph of main")

    @property
    def checked_type(self) -> Any:
        """Refused: the result's type depends on the values of the value inputs."""
        raise self.required_error("the result type of main")

    def astext(self, show_meta_data: bool = True) -> str:
        """Refused: there is no graph to print without the values of the value inputs."""
        del show_meta_data
        raise self.required_error("the text of main")

    def __str__(self) -> str:
        return self.astext()

    def __repr__(self) -> str:
        params = ", ".join(f"%{v.name}: {v.type_annotation}" for v in self.params)
        return f"ValueSpecializedFunction(({params}), value inputs {list(self.value_inputs)})"

    def bind(self, values: Mapping[str, Any]) -> ValueSpecializedFunction:
        """A copy with the parameters named in ``values`` fixed to those values."""
        names = {v.name for v in self.params}
        unknown = sorted(set(values) - names)
        if unknown:
            raise DynamicValueError(
                f"main has no parameter(s) {unknown}; its parameters are {sorted(names)}",
                unknown,
            )
        checked = {n: self.specializer.check_value(n, v) for n, v in values.items()}
        return ValueSpecializedFunction(
            self.inputs, self.specializer, MappingProxyType({**self.fixed, **checked})
        )

    def specialize(self, values: Mapping[str, Any], what: str = "main") -> Specialization:
        """The model imported with the value inputs bound to their values in ``values`` (or
        fixed); raises :class:`ValueInputsRequiredError` for a value input with neither.
        """
        return self.specializer.specialize({**self.fixed, **values}, what)


@dataclass(frozen=True, slots=True, eq=False)
class ValueSpecializedModule(IRModuleBase[ValueSpecializedFunction]):
    """The module ``from_onnx`` returns for a model whose shapes depend on the values of graph
    inputs: ``main`` is a :class:`ValueSpecializedFunction`. Executors compile it per values;
    ``relay.build`` needs the values in its ``params``.
    """

    def _check_function(self, name: str, func: Any) -> None:
        if not isinstance(func, ValueSpecializedFunction):
            raise DynamicValueError(
                f"ValueSpecializedModule: function {name!r} is a {type(func).__name__}, "
                "expected a ValueSpecializedFunction",
                [],
            )

    @property
    def value_inputs(self) -> tuple[str, ...]:
        """The graph inputs whose values decide ``main``'s shapes."""
        return self["main"].value_inputs

    def required_error(self, what: str) -> OnnxImportError:
        """The error for ``what`` (a caller) needing the graph without the values."""
        return self["main"].required_error(what)

    def astext(self, show_meta_data: bool = True) -> str:
        """Refused: there is no graph to print without the values of the value inputs."""
        return self["main"].astext(show_meta_data)

    def __str__(self) -> str:
        return self.astext()

    def __repr__(self) -> str:
        return f"ValueSpecializedModule(main={self['main']!r})"
