"""FuseOps: operators are grouped into primitive functions, each compiled as one kernel.

The rules follow TVM's operator patterns. Walking producers before consumers, a call joins the
groups of its arguments when each such argument is its group's result and read by this call
alone (so a group has one result and no path leaves it and comes back: no cycles), and:

- an elementwise or broadcast call joins any group: an injective group, a convolution or dense
  group (``OUT_ELEMWISE_FUSABLE``: bias, activation, residual add fused into its epilogue) or a
  reduction group, the last two only when the call keeps the anchor's output shape;
- an injective call (reshape, transpose, concatenate, ...) joins injective groups;
- a reduction joins injective groups (the injective stages are inlined into it);
- convolutions, dense and opaque operators start their own group.

Device copies stay outside every group (the executor runs them). A group holds at most one
anchor (a convolution, dense or reduction) and at most ``MAX_FUSED_OPS`` operators. A tuple
made only for one call (``concatenate``'s argument) joins that call's group. Each group becomes
``fn(params) {...}`` with attribute ``Primitive=1``, called from ``main``; scalar constants are
copied into it, other inputs are its parameters.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ...ir.transform import Pass, PassContext, map_functions
from ..attrs import Attrs
from ..expr import Call, Constant, Expr, Function, Tuple, TupleGetItem, Var
from ..functor import children, post_order
from ..module import IRModule
from ..op import OpPattern, get_op
from ..ty import TensorType

__all__ = ["MAX_FUSED_OPS", "FuseOps", "fuse_ops"]

MAX_FUSED_OPS = 256
_ANCHORS = (OpPattern.OUT_ELEMWISE_FUSABLE, OpPattern.COMM_REDUCE)


@dataclass(eq=False)
class _Group:
    members: list[Expr] = field(default_factory=list)
    kind: OpPattern = OpPattern.ELEMWISE
    anchors: int = 0

    @property
    def output(self) -> Expr:
        return self.members[-1]


def _pattern(node: Call) -> OpPattern:
    assert isinstance(node.op, str)
    return get_op(node.op).pattern


def _requantizes(group: _Group, node: Call) -> bool:
    """Whether ``node`` works on the int32 accumulators of a convolution or dense in ``group``
    (a requantization: cast to float, scale, round, clip, cast to 8 bits) keeping their shape.
    """
    anchors = [m for m in group.members if isinstance(m, Call) and isinstance(m.op, str)]
    anchor = next((m for m in anchors if _pattern(m) == OpPattern.OUT_ELEMWISE_FUSABLE), None)
    if anchor is None:
        return False
    ty, acc = node.checked_type, anchor.checked_type
    return (
        isinstance(ty, TensorType)
        and isinstance(acc, TensorType)
        and acc.dtype == "int32"
        and tuple(ty.shape) == tuple(acc.shape)
    )


def _accepts(group: _Group, node: Call, pattern: OpPattern) -> bool:
    """Whether ``node`` (of ``pattern``) may join ``group`` as its new result."""
    if pattern in (OpPattern.ELEMWISE, OpPattern.BROADCAST):
        if group.kind in _ANCHORS:
            return node.checked_type == group.output.checked_type or _requantizes(group, node)
        return group.kind <= OpPattern.INJECTIVE
    if pattern in (OpPattern.INJECTIVE, OpPattern.COMM_REDUCE):
        return group.kind <= OpPattern.INJECTIVE
    return False


class _Fuser:
    def __init__(self, func: Function) -> None:
        self.func = func
        self.order = post_order(func.body)
        self.uses: Counter[int] = Counter()
        for node in self.order:
            for child in children(node):
                self.uses[id(child)] += 1
        self.uses[id(func.body)] += 1  # the function's result is read by the caller
        self.group: dict[int, _Group] = {}

    def partition(self) -> None:
        for node in self.order:
            if isinstance(node, Call) and isinstance(node.op, str) and node.op != "device_copy":
                self._place(node)

    def _place(self, node: Call) -> None:
        pattern = _pattern(node)
        mine = _Group([node], pattern, int(pattern in _ANCHORS))
        inputs: list[Expr] = []
        for arg in node.args:
            if isinstance(arg, Tuple) and self.uses[id(arg)] == 1 and pattern != OpPattern.OPAQUE:
                mine.members.insert(0, arg)  # the tuple is made for this call alone
                self.group[id(arg)] = mine
                inputs.extend(arg.fields)
            else:
                inputs.append(arg)
        if pattern <= OpPattern.COMM_REDUCE:
            for arg in inputs:
                other = self.group.get(id(arg))
                if (
                    other is None
                    or other is mine
                    or other.output is not arg
                    or self.uses[id(arg)] != 1
                    or not _accepts(other, node, pattern)
                    or other.anchors + mine.anchors > 1
                    or len(other.members) + len(mine.members) > MAX_FUSED_OPS
                ):
                    continue
                mine = self._merge(other, mine)
        for member in mine.members:
            self.group[id(member)] = mine

    def _merge(self, producer: _Group, consumer: _Group) -> _Group:
        """``producer``'s members, then ``consumer``'s (whose last member is the new result)."""
        kinds = [producer.kind, consumer.kind]
        anchor = next((k for k in kinds if k in _ANCHORS), None)
        kind = anchor if anchor is not None else max(kinds)
        merged = _Group(
            producer.members + consumer.members, kind, producer.anchors + consumer.anchors
        )
        for member in merged.members:
            self.group[id(member)] = merged
        return merged

    def rebuild(self) -> Function:
        new: dict[int, Expr] = {}
        done: set[int] = set()
        for node in self.order:
            group = self.group.get(id(node))
            if group is None:
                new[id(node)] = _rebuilt(node, new)
            elif node is group.output and id(group) not in done:
                done.add(id(group))
                new[id(node)] = self._call_group(group, new)
        return Function(self.func.params, new[id(self.func.body)], self.func.attrs)

    def _call_group(self, group: _Group, new: dict[int, Expr]) -> Expr:
        inside = {id(m) for m in group.members}
        params: list[Var] = []
        args: list[Expr] = []
        local: dict[int, Expr] = {}
        for member in group.members:
            for child in children(member):
                if id(child) in inside or id(child) in local:
                    continue
                if isinstance(child, Constant) and child.data.size == 1:
                    local[id(child)] = child  # scalars are compiled into the kernel
                    continue
                param = Var(f"p{len(params)}", child.checked_type)
                params.append(param)
                args.append(new[id(child)])
                local[id(child)] = param
            local[id(member)] = _rebuilt(member, local)
        body = local[id(group.output)]
        name = "_".join(str(m.op).replace(".", "_") for m in group.members if isinstance(m, Call))
        func = Function(tuple(params), body, Attrs.of(Primitive=1, hint=name))
        return Call(func, tuple(args), name=_source_name(group))


def _source_name(group: _Group) -> str:
    anchor = next((m for m in group.members if isinstance(m, Call) and m.name), None)
    return anchor.name if anchor is not None else ""


def _rebuilt(node: Expr, new: dict[int, Expr]) -> Expr:
    if isinstance(node, Call):
        return Call(node.op, tuple(new[id(a)] for a in node.args), node.attrs, node.name)
    if isinstance(node, Tuple):
        return Tuple(tuple(new[id(f)] for f in node.fields))
    if isinstance(node, TupleGetItem):
        return TupleGetItem(new[id(node.tuple_value)], node.index)
    return node


def _fuse(func: Function) -> Function:
    if func.attrs.get("Primitive"):
        return func  # a kernel already, or a function an external compiler compiles
    fuser = _Fuser(func)
    fuser.partition()
    return fuser.rebuild()


def fuse_ops(mod: IRModule, ctx: PassContext | None = None) -> IRModule:
    """Group operators into primitive functions (see the module docstring); at ``opt_level``
    0 every operator is its own group.
    """
    if ctx is not None and ctx.opt_level == 0:
        return map_functions(mod, _unfused)
    return map_functions(mod, _fuse)


def _unfused(func: Function) -> Function:
    fuser = _Fuser(func)
    for node in fuser.order:
        if isinstance(node, Call) and isinstance(node.op, str) and node.op != "device_copy":
            group = _Group([node], _pattern(node))
            fuser.group[id(node)] = group
    return fuser.rebuild()


FuseOps = Pass("FuseOps", 0, fuse_ops)
