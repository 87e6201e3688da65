"""``relay.create_executor``: run a graph function from Python, by the reference interpreter
(``"debug"``) or compiled for the graph executor (``"graph"``, ``"vm"``).

``create_executor(kind, mod, device, target).evaluate()`` returns a Python callable of
``mod["main"]``: positional arguments fill the parameters in order, keyword arguments name
them (weights are passed this way: ``f(x, **params)``). It returns an ``NDArray``, or a list
of them for a tuple-valued function. ``evaluate(expr)`` does the same for a ``Function``;
any other expression is evaluated at once and its value returned.

pytvm's graph IR has static shapes and no control flow, so the ``"vm"`` kind, which TVM
needs for dynamic shapes, compiles as ``"graph"`` does. A model whose shapes depend on the
values of graph inputs (a :class:`~pytvm.frontend.onnx.specialize.ValueSpecializedModule`)
is specialized per call instead, as a JIT does: each call imports the model with those inputs'
values bound as constants and compiles it with the executor's kind, target and device, both
cached by the values, then runs the other inputs through it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ..ffi.device import Device
from ..ffi.errors import TVMTypeError, TVMValueError
from ..frontend.onnx.run_time_shapes import PartialTensorType, RunTimeVar
from ..frontend.onnx.specialize import ValueSpecializedFunction, ValueSpecializedModule
from ..graph import Function, IRModule, TupleType, Var
from ..graph import build as graph_build
from ..graph.interpreter import interpret
from ..graph.transform import bind_params
from ..runtime.graph_executor.graph_module import GraphModule
from ..runtime.ndarray import NDArray
from ..runtime.ndarray import array as nd_array
from ..target import Target

__all__ = ["EXECUTOR_KINDS", "Executor", "GraphExecutor", "Interpreter", "create_executor"]

Result = NDArray | list[NDArray]


def _as_numpy(value: Any) -> np.ndarray:
    return value.numpy() if isinstance(value, NDArray) else np.asarray(value)


def bind_arguments(
    func: Function | ValueSpecializedFunction, args: Sequence[Any], kwargs: Mapping[str, Any]
) -> dict[str, Any]:
    """``func``'s parameters by name from positional ``args`` and keyword ``kwargs``; each value
    must have its parameter's shape and dtype.
    """
    params = list(func.params)
    if len(args) > len(params):
        raise TVMValueError(
            f"the function takes {len(params)} argument(s) "
            f"({', '.join(p.name for p in params)}), got {len(args)} positional"
        )
    values: dict[str, Any] = {p.name: a for p, a in zip(params, args, strict=False)}
    names = {p.name for p in params}
    for name, value in kwargs.items():
        if name not in names:
            raise TVMValueError(
                f"the function has no parameter {name!r}; its parameters are {sorted(names)}"
            )
        if name in values:
            raise TVMValueError(f"parameter {name!r} is given twice (by position and by name)")
        values[name] = value
    missing = [p.name for p in params if p.name not in values]
    if missing:
        raise TVMValueError(f"no value for parameter(s) {missing}")
    for p in params:
        _check_value(p, values[p.name])
    return values


def _check_value(param: Var | RunTimeVar, value: Any) -> None:
    ty = param.type_annotation
    shape = tuple(value.shape) if hasattr(value, "shape") else np.shape(value)
    dtype = str(value.dtype) if hasattr(value, "dtype") else str(np.asarray(value).dtype)
    if isinstance(ty, PartialTensorType):  # dimensions known only at run time
        if not ty.accepts(shape, dtype):
            raise TVMValueError(
                f"parameter {param.name!r} expects a {ty.dtype} tensor of shape {ty}, got "
                f"{dtype} of shape {shape}"
            )
        return
    want_shape = tuple(getattr(ty, "shape", ()))
    want_dtype = str(getattr(ty, "dtype", dtype))
    if shape != want_shape or dtype != want_dtype:
        raise TVMValueError(
            f"parameter {param.name!r} expects a {want_dtype} tensor of shape {want_shape}, got "
            f"{dtype} of shape {shape}"
        )


class Executor:
    """Evaluates functions of ``mod`` on ``device`` (TVM's ``relay.backend.Executor``)."""

    def __init__(
        self, mod: IRModule | ValueSpecializedModule | None, device: Device, target: Target
    ) -> None:
        self.mod = mod
        self.device = device
        self.target = target

    def evaluate(
        self, expr: Any = None, binds: Mapping[Var | RunTimeVar, Any] | None = None
    ) -> Any:
        """A callable of ``expr`` (a Function; default ``mod["main"]``), or the value of an
        expression that is not a function. ``binds`` fixes parameters to values.
        """
        func: Function | ValueSpecializedFunction
        if expr is None:
            if self.mod is None:
                raise TVMValueError("evaluate(): the executor has no module; pass an expression")
            func = self.mod["main"]
        elif isinstance(expr, (Function, ValueSpecializedFunction)):
            func = expr
        elif isinstance(expr, str):
            if self.mod is None or expr not in self.mod:
                raise TVMValueError(f"evaluate({expr!r}): the module has no such function")
            func = self.mod[expr]
        else:
            func = Function((), expr)
        if isinstance(func, ValueSpecializedFunction):
            if binds:
                func = func.bind({var.name: _as_numpy(v) for var, v in binds.items()})
            return self._specializing_executor(func)
        if binds:
            func = bind_params(func, {var.name: _as_numpy(v) for var, v in binds.items()})
        run = self._make_executor(func)
        if expr is not None and not isinstance(expr, (Function, str)):
            return run()
        return run

    def _make_executor(self, func: Function) -> Callable[..., Result]:
        raise NotImplementedError  # each kind defines it

    def _specializing_executor(self, func: ValueSpecializedFunction) -> Callable[..., Result]:
        """A callable of ``func`` that imports and compiles it for the values of its value
        inputs at each call (cached by the values), then runs the other arguments through it.
        """
        where = f"{type(self).__name__}, target {self.target}, device {self.device}"

        def run(*args: Any, **kwargs: Any) -> Result:
            values = bind_arguments(func, args, kwargs)
            spec = func.specialize(values, "create_executor(...).evaluate()")
            key = (where, spec.key)
            compiled = func.specializer.compiled(key, lambda: self._make_executor(spec.func))
            rest = {p.name: values[p.name] for p in spec.func.params if p.name in values}
            rest.update({n: v for n, v in spec.params.items() if n not in rest})
            return compiled(**rest)

        return run


class Interpreter(Executor):
    """``"debug"``: runs each operator's numpy reference (no compilation)."""

    def _make_executor(self, func: Function) -> Callable[..., Result]:
        def run(*args: Any, **kwargs: Any) -> Result:
            values = bind_arguments(func, args, kwargs)
            out = interpret(func, {k: _as_numpy(v) for k, v in values.items()})
            if isinstance(out, tuple):
                return [nd_array(np.asarray(o), self.device) for o in out]
            return nd_array(np.asarray(out), self.device)

        return run


class GraphExecutor(Executor):
    """``"graph"`` (and ``"vm"``): compiles the function with ``relay.build`` for ``target``
    and runs it on the graph executor; arguments are set as its inputs.
    """

    def _make_executor(self, func: Function) -> Callable[..., Result]:
        lib = graph_build(IRModule.from_expr(func), target=self.target)
        module = GraphModule(lib["default"](self.device))
        inputs = set(module.get_input_info()[0])
        num_outputs = module.get_num_outputs()
        is_tuple = isinstance(func.body.checked_type, TupleType)

        def run(*args: Any, **kwargs: Any) -> Result:
            values = bind_arguments(func, args, kwargs)
            for name, value in values.items():
                if name in inputs:  # the build drops parameters the result does not read
                    module.set_input(name, value)
            module.run()
            # copies, as TVM's executors return: the executor's own arrays are reused by the
            # next run (and a specialized function's executor is shared through its cache)
            outs = [module.get_output(i).copyto(self.device) for i in range(num_outputs)]
            return outs if is_tuple else outs[0]

        return run


#: The executor of each ``kind`` of :func:`create_executor`.
EXECUTOR_KINDS: Mapping[str, type[Executor]] = {
    "debug": Interpreter,
    "graph": GraphExecutor,
    "vm": GraphExecutor,
}


def create_executor(
    kind: str = "debug",
    mod: IRModule | ValueSpecializedModule | None = None,
    device: Device | None = None,
    target: str | Target | None = "llvm",
    params: Mapping[str, Any] | None = None,
) -> Executor:
    """An executor of ``kind`` (``"debug"``, ``"graph"`` or ``"vm"``) for ``mod`` on
    ``device`` (default ``cpu(0)``), compiling for ``target``; ``params`` are bound into
    ``mod["main"]`` as constants.

    Examples
    --------
    >>> import numpy as np
    >>> from pytvm import relay
    >>> x = relay.var("x", shape=(2,))
    >>> mod = relay.IRModule.from_expr(relay.Function([x], relay.add(x, x)))
    >>> relay.create_executor("graph", mod).evaluate()(np.ones(2, "float32")).numpy()
    array([2., 2.], dtype=float32)
    """
    if kind not in EXECUTOR_KINDS:
        raise TVMValueError(
            f"create_executor: unknown kind {kind!r}; expected one of {sorted(EXECUTOR_KINDS)}"
        )
    if mod is not None and not isinstance(mod, (IRModule, ValueSpecializedModule)):
        raise TVMTypeError(f"create_executor: mod must be an IRModule, got {type(mod).__name__}")
    if device is None:
        from ..ffi.device import cpu

        device = cpu(0)
    tgt = Target(target if target is not None else "llvm")
    if params and isinstance(mod, ValueSpecializedModule):
        mod = mod.with_function(mod["main"].bind(params), "main")
    elif params and isinstance(mod, IRModule):
        mod = mod.with_function(bind_params(mod["main"], params), "main")
    return EXECUTOR_KINDS[kind](mod, device, tgt)
