"""FuseQDQ: a float convolution or dense of dequantized 8-bit codes becomes the integer product.

QDQ models (what ``onnxruntime.quantization.quantize_static`` writes) compute
``conv2d(dequantize(x_q), dequantize(w_q))`` in float: ``dequantize(q) = (float(q) - zp) * s``.
With ``x_q`` 8-bit data of one zero point and scale, ``w_q`` a constant int8 weight of zero
points 0 (per tensor or per output channel) and one group (or depthwise: ``groups == C``), the
product is
``float(qnn.conv2d(x_q, w_q, input_zero_point=zp_x)) * (s_x * s_w)`` exactly as the float
arithmetic would compute it without rounding: the 8-bit dot-product kernel accumulates in int32
and the scale is one multiply per output, which (like a following bias, activation and
``QuantizeLinear``) fuses into the kernel's output stage. A constant bias added to the product
whose values are whole multiples of ``s_x * s_w`` (a quantized int32 bias, dequantized) joins
the int32 accumulators. ``nn.dense`` of ``dequantize(x_q)`` (2-d, or reshaped to 2-d) and the
transpose of a dequantized constant ``[K, N]`` int8 matrix (as the ONNX importer writes
``MatMul``), or a dequantized ``[N, K]`` one (``Gemm`` with ``transB``), becomes a 1x1
``qnn.conv2d`` over the rows. A ``QuantizeLinear`` of such a product (``(float(acc) * s) /
s_y``, through a ReLU or a clip) divides the scale once, ``float(acc) * (s / s_y)``, as ONNX
Runtime's fused QDQ kernels requantize.

Runs before ``FoldConstant``, which would otherwise fold the dequantized weights into floats.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...ir.transform import Pass, PassContext, map_functions
from ..expr import Call, Constant, Expr, Function, call
from ..functor import rewrite_pairs
from ..int8_conv import int8_conv2d, int8_conv2d_applies, int8_dense, int8_groups_apply
from ..module import IRModule
from ..ty import TensorType
from .fold_constant import fold_call

__all__ = ["FuseQDQ", "fuse_qdq"]

_CODES = ("uint8", "int8")
_OIHW = 4
_MATRIX = 2
#: The most bytes of a scale or zero point evaluated here.
_VALUE_BYTES = 1 << 20
#: How close ``bias / scale`` must come to an integer to join the int32 accumulators: an
#: absolute part, and a relative one for large codes (a float32 bias ``code * scale`` carries
#: a relative rounding error of 2**-24, which ``/ scale`` scales with the code).
_WHOLE = 1e-3
_WHOLE_RELATIVE = 2.0**-20


@dataclass(frozen=True, slots=True)
class _Dequantized:
    """``(float(codes) - zero_point) * scale``."""

    codes: Expr
    zero_point: np.ndarray
    scale: np.ndarray


def _dtype(e: Expr) -> str | None:
    ty = e.checked_type
    return ty.dtype if isinstance(ty, TensorType) else None


def _value(e: Expr) -> np.ndarray | None:
    """The value of ``e`` when it is computed from constants alone (a scale, a zero point: a
    bound parameter reshaped), evaluated here; None otherwise.
    """
    if isinstance(e, Constant):
        return e.data
    if not (isinstance(e, Call) and isinstance(e.op, str)):
        return None
    args: list[Expr] = []
    for arg in e.args:
        v = _value(arg)
        if v is None:
            return None
        args.append(Constant(v))
    folded = fold_call(Call(e.op, tuple(args), e.attrs), _VALUE_BYTES)
    return folded.data if isinstance(folded, Constant) else None


def _dequantized(e: Expr) -> _Dequantized | None:
    """``e`` as a dequantization of 8-bit codes with constant zero point and scale (or None)."""
    if not (isinstance(e, Call) and e.op == "multiply"):
        return None
    inner: Expr = e.args[0]
    scale = _value(e.args[1])
    zero: np.ndarray | None = np.zeros((), dtype="float32")
    if isinstance(inner, Call) and inner.op == "subtract":
        zero = _value(inner.args[1])
        inner = inner.args[0]
    if scale is None or zero is None:
        return None
    if not (isinstance(inner, Call) and inner.op == "cast" and _dtype(inner) == "float32"):
        return None
    codes = inner.args[0]
    if _dtype(codes) not in _CODES:
        return None
    return _Dequantized(codes, zero, scale)


def _scalar(values: np.ndarray) -> float | None:
    flat = np.asarray(values).reshape(-1)
    return float(flat[0]) if flat.size == 1 else None


def _channel_values(values: np.ndarray, channels: int, axis: int, ndim: int) -> np.ndarray | None:
    """``values`` as one per channel (along ``axis`` of an ``ndim``-d tensor), or None."""
    v = np.asarray(values)
    if v.size == 1:
        return np.full(channels, v.reshape(-1)[0], dtype=v.dtype)
    full = v.reshape((1,) * (ndim - v.ndim) + v.shape)
    if full.shape[axis] != channels or full.size != channels:
        return None
    return full.reshape(-1)


def _data_codes(d: _Dequantized) -> tuple[Expr, int, float] | None:
    """The codes, integer zero point and scale of dequantized data of one zero point/scale."""
    zero, scale = _scalar(d.zero_point), _scalar(d.scale)
    if zero is None or scale is None or zero != round(zero):
        return None
    return d.codes, int(zero), scale


def _weight_codes(d: _Dequantized, axis: int) -> tuple[np.ndarray, np.ndarray] | None:
    """A constant int8 weight of zero points 0 and its scales along output ``axis``."""
    if not (isinstance(d.codes, Constant) and d.codes.data.dtype == np.int8):
        return None
    w = d.codes.data
    scales = _channel_values(d.scale, w.shape[axis], axis, w.ndim)
    zeros = _channel_values(d.zero_point, w.shape[axis], axis, w.ndim)
    if scales is None or zeros is None or np.any(zeros):
        return None
    return w, scales.astype("float32")


def _scaled(acc: Expr, scale: np.ndarray, channels: int, ndim: int, axis: int) -> Expr:
    """``float(acc) * scale``, one scale per channel along ``axis``."""
    shape = [1] * ndim
    shape[axis] = channels
    factor = Constant(scale.astype("float32").reshape(shape))
    return call("multiply", call("cast", acc, dtype="float32"), factor)


def _conv(node: Call) -> Expr | None:
    attrs = node.attrs
    groups = int(attrs.get("groups", 1))
    if (
        (attrs.get("kernel_layout") or "OIHW") != "OIHW"
        or (attrs.get("data_layout") or "NCHW") != "NCHW"
        or (attrs.get("out_dtype") or "float32") != "float32"
    ):
        return None
    x, w = _dequantized(node.args[0]), _dequantized(node.args[1])
    data = None if x is None else _data_codes(x)
    weight = None if w is None else _weight_codes(w, 0)
    if data is None or weight is None:
        return None
    codes, zero, x_scale = data
    w_codes, w_scale = weight
    channels = int(codes.checked_type.shape[1])  # type: ignore[union-attr]
    if not (
        int8_conv2d_applies(str(_dtype(codes)), w_codes, np.zeros(1))
        and int8_groups_apply(channels, w_codes, groups)
    ):
        return None
    acc = int8_conv2d(
        codes,
        zero,
        w_codes,
        attrs["strides"],
        attrs["padding"],
        attrs["dilation"],
        None,
        node.name,
        groups,
    )
    scale = (np.float32(x_scale) * w_scale).astype("float32")
    return _scaled(acc, scale, w_codes.shape[0], _OIHW, 1)


def _data_rows(e: Expr) -> _Dequantized | None:
    """``e`` as dequantized codes, looking through a reshape of per-tensor dequantized data."""
    if not (isinstance(e, Call) and e.op == "reshape"):
        return _dequantized(e)
    inner = _dequantized(e.args[0])
    if inner is None or _scalar(inner.scale) is None or _scalar(inner.zero_point) is None:
        return None
    shape = tuple(int(d) for d in e.checked_type.shape)  # type: ignore[union-attr]
    return _Dequantized(call("reshape", inner.codes, newshape=shape), inner.zero_point, inner.scale)


def _dense(node: Call) -> Expr | None:
    layout, out_dtype = node.attrs.get("weight_layout") or "NK", node.attrs.get("out_dtype")
    if layout != "NK" or (out_dtype or "float32") != "float32":
        return None
    w_expr = node.args[1]
    if isinstance(w_expr, Call) and w_expr.op == "transpose":  # ONNX MatMul: B is [K, N]
        w, axis = _dequantized(w_expr.args[0]), 1
    else:  # ONNX Gemm with transB: B is [N, K]
        w, axis = _dequantized(w_expr), 0
    x = _data_rows(node.args[0])
    data = None if x is None else _data_codes(x)
    weight = None if w is None else _weight_codes(w, axis)  # scales per output column
    if data is None or weight is None or weight[0].ndim != _MATRIX:
        return None
    codes, zero, x_scale = data
    k_n, w_scale = weight
    if axis == 0:
        k_n = np.ascontiguousarray(k_n.T)
    if len(codes.checked_type.shape) != _MATRIX:  # type: ignore[union-attr]
        return None
    n = k_n.shape[1]
    acc = int8_dense(codes, zero, k_n, node.name)
    scale = (np.float32(x_scale) * w_scale).astype("float32")
    return _scaled(acc, scale, n, _MATRIX, 1)


def _integer_bias(node: Call) -> Expr | None:
    """``bias_add(float(acc) * s, b)`` with ``b / s`` whole: ``float(bias_add(acc, b / s)) * s``."""
    scaled, bias_expr = node.args
    bias = _value(bias_expr)
    if not (
        bias is not None
        and isinstance(scaled, Call)
        and scaled.op == "multiply"
        and isinstance(scaled.args[1], Constant)
        and isinstance(scaled.args[0], Call)
        and scaled.args[0].op == "cast"
    ):
        return None
    acc = scaled.args[0].args[0]
    if _dtype(acc) != "int32":  # int32 accumulators: a qnn.conv2d, a dense's rows of one
        return None
    axis = int(node.attrs.get("axis", 1))
    ndim = len(node.checked_type.shape)  # type: ignore[union-attr]
    channels = int(node.checked_type.shape[axis])  # type: ignore[union-attr]
    scale = _channel_values(scaled.args[1].data, channels, axis, ndim)
    b = np.asarray(bias, dtype="float64").reshape(-1)
    if scale is None or b.size != channels or not np.all(scale):
        return None
    units = b / scale.astype("float64")
    whole = np.round(units)
    slack = _WHOLE + np.abs(units) * _WHOLE_RELATIVE
    if np.any(np.abs(units - whole) > slack) or np.any(np.abs(whole) >= 2**31):
        return None
    acc = call("nn.bias_add", acc, Constant(whole.astype("int32")), axis=axis, name=node.name)
    return _scaled(acc, scale, channels, ndim, axis)


def _scaled_acc(e: Expr) -> tuple[Expr, np.ndarray] | None:
    """``e`` as ``float(acc) * scale`` of int32 accumulators (what the rewrites above write),
    else None.
    """
    if not (
        isinstance(e, Call)
        and e.op == "multiply"
        and isinstance(e.args[1], Constant)
        and isinstance(e.args[0], Call)
        and e.args[0].op == "cast"
        and _dtype(e.args[0].args[0]) == "int32"
    ):
        return None
    return e.args[0], e.args[1].data


def _requantize(node: Call) -> Expr | None:
    """``(float(acc) * s) / s_y`` (a QuantizeLinear of an integer product, through a ReLU or a
    clip) as ``float(acc) * (s / s_y)``, one multiply instead of a multiply and a division, as
    ONNX Runtime's fused QDQ kernels requantize (the clip's bounds divided by ``s_y``).
    """
    divisor = _value(node.args[1])
    if divisor is None or divisor.size != 1 or not float(divisor.reshape(-1)[0]) > 0:
        return None
    d = np.float32(divisor.reshape(-1)[0])
    inner = node.args[0]
    activation = None
    if isinstance(inner, Call) and inner.op in ("nn.relu", "clip"):
        activation, inner = inner, inner.args[0]
    scaled = _scaled_acc(inner)
    if scaled is None:
        return None
    acc, scale = scaled
    out: Expr = call("multiply", acc, Constant((scale / d).astype("float32")))
    if activation is None:
        return out
    if activation.op == "nn.relu":
        return call("nn.relu", out)
    lo, hi = float(activation.attrs["a_min"]), float(activation.attrs["a_max"])
    return call("clip", out, a_min=float(np.float32(lo) / d), a_max=float(np.float32(hi) / d))


def _fuse(old: Expr, node: Expr) -> Expr | None:
    del old
    if not isinstance(node, Call):
        return None
    if node.op == "nn.conv2d":
        return _conv(node)
    if node.op == "nn.dense":
        return _dense(node)
    if node.op == "nn.bias_add":
        return _integer_bias(node)
    if node.op == "divide":
        return _requantize(node)
    return None


def _fuse_function(func: Function) -> Function:
    if func.attrs.get("Primitive") or func.attrs.get("Compiler"):
        return func
    (body,), _ = rewrite_pairs((func.body,), _fuse)
    return func if body is func.body else Function(func.params, body, func.attrs)


def fuse_qdq(mod: IRModule, ctx: PassContext | None = None) -> IRModule:
    """Turn convolutions and dense layers of dequantized 8-bit codes into integer products."""
    del ctx
    return map_functions(mod, _fuse_function)


FuseQDQ = Pass("FuseQDQ", 2, fuse_qdq)
