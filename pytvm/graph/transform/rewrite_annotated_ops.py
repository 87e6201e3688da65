"""RewriteAnnotatedOps: ``on_device`` annotations become ``device_copy`` nodes at boundaries.

A value wrapped in ``on_device(x, device_type=T)`` is computed on device type ``T``; everything
else runs on the fallback device (``PassContext`` config ``"graph.fallback_device_type"``,
default the CPU). The annotations are removed and a ``device_copy`` (source and destination
device types as attributes) is inserted on every edge whose two ends run on different devices,
one per value and destination. Constants are placed with the consumer that reads them (a copy
of the constant per device that reads it), so weights never cross devices at run time.
"""

from __future__ import annotations

from ...ir.transform import Pass, PassContext, map_functions
from ..expr import Call, Constant, Expr, Function, Tuple, TupleGetItem, Var, call
from ..functor import children, post_order
from ..module import IRModule

__all__ = ["RewriteAnnotatedOps", "rewrite_annotated_ops"]

CPU = 1


def _is_annotation(node: Expr) -> bool:
    return isinstance(node, Call) and node.op == "on_device"


def _placement(func: Function, fallback: int) -> dict[int, int]:
    """Device type of every node (annotations resolved onto the value they wrap)."""
    placed: dict[int, int] = {}
    for node in post_order(func.body):
        if _is_annotation(node):
            assert isinstance(node, Call)
            placed[id(node.args[0])] = int(node.attrs["device_type"])
    for node in post_order(func.body):
        if _is_annotation(node):
            assert isinstance(node, Call)
            placed[id(node)] = placed[id(node.args[0])]
        elif isinstance(node, (Tuple, TupleGetItem)) and id(node) not in placed:
            kids = children(node)
            placed[id(node)] = placed.get(id(kids[0]), fallback) if kids else fallback
        placed.setdefault(id(node), fallback)
    return placed


def _rewrite(func: Function, fallback: int) -> Function:
    if not any(_is_annotation(n) for n in post_order(func.body)):
        return func
    placed = _placement(func, fallback)
    new: dict[int, Expr] = {}
    copies: dict[tuple[int, int], Expr] = {}
    constants: dict[tuple[int, int], Expr] = {}

    def operand(arg: Expr, device: int) -> Expr:
        """``arg`` as seen by a consumer on ``device``."""
        while _is_annotation(arg):
            assert isinstance(arg, Call)
            arg = arg.args[0]
        if isinstance(arg, Constant):
            return constants.setdefault((id(arg), device), Constant(arg.data))
        src = placed[id(arg)]
        value = new[id(arg)]
        if src == device or isinstance(arg, Tuple):
            return value
        key = (id(arg), device)
        if key not in copies:
            copies[key] = call("device_copy", value, src_dev_type=src, dst_dev_type=device)
        return copies[key]

    for node in post_order(func.body):
        if isinstance(node, (Var, Constant)) or _is_annotation(node):
            new[id(node)] = node
            continue
        device = placed[id(node)]
        if isinstance(node, Call):
            args = tuple(operand(a, device) for a in node.args)
            new[id(node)] = Call(node.op, args, node.attrs, node.name)
        elif isinstance(node, Tuple):
            new[id(node)] = Tuple(tuple(operand(f, placed[id(f)]) for f in node.fields))
        else:
            assert isinstance(node, TupleGetItem)
            new[id(node)] = TupleGetItem(new[id(node.tuple_value)], node.index)
    body = func.body
    while _is_annotation(body):
        assert isinstance(body, Call)
        body = body.args[0]
    return Function(func.params, new[id(body)], func.attrs)


def rewrite_annotated_ops(mod: IRModule, ctx: PassContext | None = None) -> IRModule:
    """Place annotated values on their devices (see the module docstring)."""
    ctx = ctx if ctx is not None else PassContext.current()
    fallback = int(ctx.get("graph.fallback_device_type", CPU))
    return map_functions(mod, lambda f: _rewrite(f, fallback))


RewriteAnnotatedOps = Pass("RewriteAnnotatedOps", 0, rewrite_annotated_ops)
