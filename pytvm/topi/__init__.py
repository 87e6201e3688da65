"""The operator library: tensor-expression definitions of operators and their CPU schedules.

Names and signatures follow TVM's ``topi``: ``topi.add``, ``topi.nn.conv2d_nchw``,
``topi.image.resize2d``; default schedules are in ``topi.generic`` and ``topi.x86``.

Examples
--------
>>> from pytvm import te, topi
>>> A = te.placeholder((2, 3), name="A")
>>> B = te.placeholder((3,), name="B")
>>> C = topi.add(A, B)
>>> [str(d) for d in C.shape], C.op.tag
(['2', '3'], 'broadcast')
"""

from __future__ import annotations

from . import generic, image, math, nn, tag, utils, x86
from . import generic_op_impl  # Python's operators on te.Tensor build topi computes
from .broadcast import (
    add,
    broadcast_to,
    divide,
    equal,
    floor_divide,
    floor_mod,
    greater,
    greater_equal,
    less,
    less_equal,
    logical_and,
    logical_or,
    maximum,
    minimum,
    mod,
    multiply,
    not_equal,
    power,
    subtract,
)
from .elemwise import (
    abs,
    cast,
    ceil,
    clip,
    erf,
    exp,
    floor,
    identity,
    log,
    negative,
    round,
    rsqrt,
    sigmoid,
    sqrt,
    tanh,
)
from .fast_math import fast_erf, fast_exp, fast_tanh
from .gather import gather, gather_nd
from .indexing import dynamic_strided_slice, strided_slice, take, where
from .layout import layout_axes, layout_transform
from .math import (
    acosh,
    asinh,
    atanh,
    cos,
    cosh,
    isfinite,
    isinf,
    isnan,
    logical_not,
    logical_xor,
    sign,
    sin,
    sinh,
    tan,
    trunc,
)
from .reduction import all, any, argmax, argmin, collapse_sum, max, mean, min, prod, sum
from .scan import cumsum
from .transform import (
    concatenate,
    expand_dims,
    matmul,
    reshape,
    split,
    squeeze,
    tile,
    transpose,
)
from .utils import InvalidShapeError

__all__ = [
    "InvalidShapeError",
    "abs",
    "acosh",
    "add",
    "all",
    "any",
    "argmax",
    "argmin",
    "asinh",
    "atanh",
    "broadcast_to",
    "cast",
    "ceil",
    "clip",
    "collapse_sum",
    "concatenate",
    "cos",
    "cosh",
    "cumsum",
    "divide",
    "dynamic_strided_slice",
    "equal",
    "erf",
    "exp",
    "expand_dims",
    "fast_erf",
    "fast_exp",
    "fast_tanh",
    "floor",
    "floor_divide",
    "floor_mod",
    "gather",
    "gather_nd",
    "generic",
    "generic_op_impl",
    "greater",
    "greater_equal",
    "identity",
    "image",
    "isfinite",
    "isinf",
    "isnan",
    "layout_axes",
    "layout_transform",
    "less",
    "less_equal",
    "log",
    "logical_and",
    "logical_not",
    "logical_or",
    "logical_xor",
    "math",
    "matmul",
    "max",
    "maximum",
    "mean",
    "min",
    "minimum",
    "mod",
    "multiply",
    "negative",
    "nn",
    "not_equal",
    "power",
    "prod",
    "reshape",
    "round",
    "rsqrt",
    "sigmoid",
    "sign",
    "sin",
    "sinh",
    "split",
    "sqrt",
    "squeeze",
    "strided_slice",
    "subtract",
    "sum",
    "tag",
    "take",
    "tan",
    "tanh",
    "tile",
    "transpose",
    "trunc",
    "utils",
    "where",
    "x86",
]
