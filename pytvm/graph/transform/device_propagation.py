"""The device of every node, propagated from the ``device_copy`` nodes (seed 004's two passes).

Pass 1 walks up from each copy's input, giving every producer the copy's source device type,
until it meets another copy. Pass 2 gives every node not reached the destination device type of
the last copy in execution order. A graph without copies has an empty map (one device).
"""

from __future__ import annotations

from ..expr import Call, Expr
from ..functor import children, post_order

__all__ = ["device_map", "is_device_copy"]


def is_device_copy(node: Expr) -> bool:
    """Whether ``node`` is a ``device_copy`` call."""
    return isinstance(node, Call) and node.op == "device_copy"


def device_map(body: Expr) -> dict[int, int]:
    """``id(node) -> device type`` for every node of ``body`` (empty when nothing is copied)."""
    order = post_order(body)
    copies = [n for n in order if is_device_copy(n)]
    if not copies:
        return {}
    tag: dict[int, int] = {}
    for copy in copies:
        assert isinstance(copy, Call)
        tag[id(copy)] = int(copy.attrs["dst_dev_type"])
    for copy in copies:  # pass 1: upward from each copy, stopping at copies
        assert isinstance(copy, Call)
        src = int(copy.attrs["src_dev_type"])
        stack = list(children(copy))
        while stack:
            node = stack.pop()
            if id(node) in tag:
                continue
            tag[id(node)] = src
            stack.extend(children(node))
    last = copies[-1]
    assert isinstance(last, Call)
    out_dev = int(last.attrs["dst_dev_type"])
    for node in order:  # pass 2: the rest takes the last copy's destination
        tag.setdefault(id(node), out_dev)
    return tag
