"""Layout transforms: ``reshape``, ``transpose``, ``expand_dims``, ``squeeze``, ``flatten``,
``tile``, ``concatenate`` and ``split``.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..te.operation import compute
from ..te.tensor import Tensor
from ..tir.expr import ExprLike, PrimExpr, Var, const, convert
from ..tir.op import if_then_else
from . import tag
from ._shape import const_int, normalize_axes, normalize_axis, op_error, prod
from .masking import matrix_set_diag, one_hot, sequence_mask, sparse_to_dense, strided_set, trilu
from .reordering import (
    adv_index,
    expand_like,
    flip,
    repeat,
    reverse_sequence,
    stack,
    tensordot,
    unravel_index,
)

__all__ = [
    "adv_index",
    "concatenate",
    "expand_dims",
    "expand_like",
    "flatten",
    "flip",
    "matmul",
    "matrix_set_diag",
    "one_hot",
    "ravel_index",
    "repeat",
    "reshape",
    "reverse_sequence",
    "sequence_mask",
    "sparse_to_dense",
    "split",
    "squeeze",
    "stack",
    "strided_set",
    "tensordot",
    "tile",
    "transpose",
    "trilu",
    "unravel_index",
]


def ravel_index(indices: Sequence[PrimExpr], shape: Sequence[PrimExpr]) -> PrimExpr:
    """The row-major linear position of ``indices`` in ``shape``."""
    flat: PrimExpr = const(0, "int32")
    for i, d in zip(indices, shape, strict=True):
        flat = flat * d + i
    return flat


def _unravel(flat: PrimExpr, shape: Sequence[PrimExpr]) -> list[PrimExpr]:
    """The row-major indices of linear position ``flat`` in ``shape``."""
    out: list[PrimExpr] = []
    for d in reversed(shape):
        out.append(flat % d if const_int(d) != 1 else const(0, flat.dtype))
        flat = flat // d
    return out[::-1]


def reshape(a: Tensor, newshape: Sequence[ExprLike]) -> Tensor:
    """``a`` with shape ``newshape`` (same elements in row-major order; one ``-1`` is inferred).

    Examples
    --------
    >>> from pytvm import te, topi
    >>> A = te.placeholder((2, 3, 4), name="A")
    >>> [str(d) for d in topi.reshape(A, (6, -1)).shape]
    ['6', '4']
    """
    dims = [convert(d) for d in newshape]
    known = [const_int(d) for d in dims]
    if known.count(-1) > 1 or any(k is not None and k < -1 for k in known):
        raise op_error(
            "reshape", "newshape", list(newshape), "non-negative dims and at most one -1"
        )
    total_in = [const_int(d) for d in a.shape]
    if -1 in known:
        if None in total_in or None in [k for k in known if k != -1]:
            raise op_error("reshape", "newshape", list(newshape), "constant shapes to infer -1")
        size_in = _product([k for k in total_in if k is not None])
        rest = _product([k for k in known if k is not None and k != -1])
        if rest == 0 or size_in % rest:
            raise op_error("reshape", "newshape", list(newshape), f"a shape of {size_in} elements")
        dims[known.index(-1)] = const(size_in // rest)
    elif None not in total_in and None not in known:
        size_in = _product([k for k in total_in if k is not None])
        size_out = _product([k for k in known if k is not None])
        if size_in != size_out:
            raise op_error(
                "reshape",
                "newshape",
                list(newshape),
                f"{size_in} elements (input shape {[str(d) for d in a.shape]})",
            )

    groups = _reshape_groups([const_int(d) for d in a.shape], [const_int(d) for d in dims])

    def body(*idx: Var) -> PrimExpr:
        if groups is None:
            return a(*_unravel(ravel_index(list(idx), dims), list(a.shape)))
        src: list[PrimExpr] = [const(0, "int32")] * a.ndim
        for group_in, group_out in groups:
            # Unit dimensions index 0; a group of one dimension on each side passes through.
            ins = [k for k in group_in if const_int(a.shape[k]) != 1]
            outs = [k for k in group_out if const_int(dims[k]) != 1]
            if not ins:
                continue
            flat = ravel_index([idx[k] for k in outs], [dims[k] for k in outs])
            for k in reversed(ins[1:]):  # the outermost index needs no modulo
                src[k] = flat % a.shape[k]
                flat = flat // a.shape[k]
            src[ins[0]] = flat
        return a(*src)

    return compute(dims, body, name="T_reshape", tag=tag.INJECTIVE)


def _reshape_groups(
    src: Sequence[int | None], dst: Sequence[int | None]
) -> list[tuple[list[int], list[int]]] | None:
    """Runs of input and output dimensions with equal products (None for symbolic shapes), so
    a reshape indexes each run on its own: a dimension kept as it is reads straight through,
    without the divisions of a whole-tensor flat index.
    """
    if None in src or None in dst:
        return None
    a = [d for d in src if d is not None]
    b = [d for d in dst if d is not None]
    groups: list[tuple[list[int], list[int]]] = []
    i = j = 0
    while i < len(a) or j < len(b):
        ins, outs = [], []
        pa = pb = 1
        if i < len(a):
            pa, i = a[i], i + 1
            ins.append(i - 1)
        if j < len(b):
            pb, j = b[j], j + 1
            outs.append(j - 1)
        while pa != pb:
            if pa < pb and i < len(a):
                pa, i = pa * a[i], i + 1
                ins.append(i - 1)
            elif pb < pa and j < len(b):
                pb, j = pb * b[j], j + 1
                outs.append(j - 1)
            else:
                return None
        groups.append((ins, outs))
    return groups


def _product(values: Sequence[int]) -> int:
    out = 1
    for v in values:
        out *= v
    return out


def transpose(a: Tensor, axes: Sequence[int] | None = None) -> Tensor:
    """``a`` with its axes permuted (reversed when ``axes`` is None)."""
    nd = a.ndim
    perm = (
        list(range(nd))[::-1]
        if axes is None
        else [normalize_axis("transpose", x, nd, "axes") for x in axes]
    )
    if sorted(perm) != list(range(nd)):
        raise op_error("transpose", "axes", axes, f"a permutation of {nd} axes")
    shape = [a.shape[p] for p in perm]

    def body(*idx: Var) -> PrimExpr:
        src: list[PrimExpr] = [const(0)] * nd
        for out_axis, in_axis in enumerate(perm):
            src[in_axis] = idx[out_axis]
        return a(*src)

    return compute(shape, body, name="T_transpose", tag=tag.INJECTIVE)


def expand_dims(a: Tensor, axis: int, num_newaxis: int = 1) -> Tensor:
    """``a`` with ``num_newaxis`` axes of extent 1 inserted at ``axis``."""
    nd = a.ndim
    if num_newaxis < 0:
        raise op_error("expand_dims", "num_newaxis", num_newaxis, "a non-negative int")
    if not -nd - 1 <= axis <= nd:
        raise op_error("expand_dims", "axis", axis, f"an int in [{-nd - 1}, {nd}]")
    pos = axis if axis >= 0 else axis + nd + 1
    shape = [*a.shape[:pos], *([const(1)] * num_newaxis), *a.shape[pos:]]

    def body(*idx: Var) -> PrimExpr:
        return a(*idx[:pos], *idx[pos + num_newaxis :])

    return compute(shape, body, name="T_expand_dims", tag=tag.BROADCAST)


def squeeze(a: Tensor, axis: int | Sequence[int] | None = None) -> Tensor:
    """``a`` without the axes of extent 1 named by ``axis`` (all such axes when None)."""
    nd = a.ndim
    if axis is None:
        drop = [k for k, d in enumerate(a.shape) if const_int(d) == 1]
    else:
        drop = normalize_axes("squeeze", axis, nd)
        for k in drop:
            if const_int(a.shape[k]) != 1:
                raise op_error(
                    "squeeze", "axis", axis, f"axes of extent 1 (axis {k} is {a.shape[k]})"
                )
    keep = [k for k in range(nd) if k not in drop]

    def body(*idx: Var) -> PrimExpr:
        src: list[PrimExpr] = [const(0)] * nd
        for out_axis, in_axis in enumerate(keep):
            src[in_axis] = idx[out_axis]
        return a(*src)

    return compute([a.shape[k] for k in keep], body, name="T_squeeze", tag=tag.INJECTIVE)


def flatten(data: Tensor) -> Tensor:
    """``data`` as ``[batch, prod(rest)]`` (TVM's ``nn.flatten``)."""
    if data.ndim < 1:
        raise op_error("flatten", "input rank", data.ndim, "at least 1")
    rest = list(data.shape[1:])
    return compute(
        [data.shape[0], prod(rest)],
        lambda b, j: data(b, *_unravel(j, rest)),
        name="T_flatten",
        tag=tag.INJECTIVE,
    )


def tile(a: Tensor, reps: Sequence[int]) -> Tensor:
    """``a`` repeated ``reps[k]`` times along each axis (numpy's ``tile``)."""
    if any(not isinstance(r, int) or r < 1 for r in reps):
        raise op_error("tile", "reps", list(reps), "positive ints")
    nd = max(a.ndim, len(reps))
    r = [1] * (nd - len(reps)) + list(reps)
    src_shape = [const(1)] * (nd - a.ndim) + list(a.shape)
    shape = [d * k for d, k in zip(src_shape, r, strict=True)]
    off = nd - a.ndim

    def body(*idx: Var) -> PrimExpr:
        return a(*[idx[off + k] % a.shape[k] for k in range(a.ndim)])

    return compute(shape, body, name="T_tile", tag=tag.INJECTIVE)


def concatenate(a_tuple: Sequence[Tensor], axis: int = 0) -> Tensor:
    """The tensors of ``a_tuple`` joined along ``axis`` (other extents must agree)."""
    if not a_tuple:
        raise op_error("concatenate", "a_tuple", a_tuple, "at least one tensor")
    first = a_tuple[0]
    ax = normalize_axis("concatenate", axis, first.ndim)
    for t in a_tuple[1:]:
        if t.ndim != first.ndim or any(
            k != ax and const_int(x) != const_int(y)
            for k, (x, y) in enumerate(zip(t.shape, first.shape, strict=False))
        ):
            raise op_error(
                "concatenate",
                "input shapes",
                [[str(d) for d in x.shape] for x in a_tuple],
                f"equal extents except on axis {ax}",
            )
    offsets: list[PrimExpr] = []
    total: PrimExpr = const(0)
    for t in a_tuple:
        offsets.append(total)
        total = total + t.shape[ax]
    shape = list(first.shape)
    shape[ax] = total

    def body(*idx: Var) -> PrimExpr:
        def read(k: int) -> PrimExpr:
            src: list[PrimExpr] = list(idx)
            src[ax] = idx[ax] - offsets[k]
            return a_tuple[k](*src)

        out = read(len(a_tuple) - 1)
        for k in range(len(a_tuple) - 2, -1, -1):
            out = if_then_else(idx[ax] < offsets[k + 1], read(k), out)
        return out

    return compute(shape, body, name="T_concat", tag=tag.INJECTIVE)


def split(ary: Tensor, indices_or_sections: int | Sequence[int], axis: int = 0) -> list[Tensor]:
    """``ary`` cut along ``axis`` into equal sections (an int) or at the given indices."""
    ax = normalize_axis("split", axis, ary.ndim)
    extent = const_int(ary.shape[ax])
    if extent is None:
        raise op_error("split", "axis extent", str(ary.shape[ax]), "a constant extent")
    if isinstance(indices_or_sections, int):
        n = indices_or_sections
        if n < 1 or extent % n:
            raise op_error("split", "indices_or_sections", n, f"a positive divisor of {extent}")
        bounds = [extent // n * k for k in range(n)]
    else:
        bounds = [0, *indices_or_sections]
        if any(b < 0 or b > extent for b in bounds) or sorted(bounds) != bounds:
            raise op_error(
                "split",
                "indices_or_sections",
                indices_or_sections,
                f"ascending ints in [0, {extent}]",
            )
    ends = [*bounds[1:], extent]
    outs = []
    for begin, end in zip(bounds, ends, strict=True):
        shape = list(ary.shape)
        shape[ax] = const(end - begin)

        def body(*idx: Var, begin: int = begin) -> PrimExpr:
            src: list[PrimExpr] = list(idx)
            src[ax] = idx[ax] + begin
            return ary(*src)

        outs.append(compute(shape, body, name="T_split", tag=tag.INJECTIVE))
    return outs


def matmul(a: Tensor, b: Tensor, transp_a: bool = False, transp_b: bool = False) -> Tensor:
    """The 2-d product ``op(a) @ op(b)`` (TVM's ``topi.matmul``; see ``topi.nn.matmul``)."""
    from .nn.linear import matmul as nn_matmul

    return nn_matmul(a, b, transpose_a=transp_a, transpose_b=transp_b)
