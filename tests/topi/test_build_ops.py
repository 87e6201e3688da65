"""Every operator built to C under its default schedule and run, against the reference
evaluator (whose semantics the other tests check against numpy and ONNX Runtime).

All kernels are lowered one by one (a failure stays with its operator) and compiled together
in one module, so the file costs one C compilation. Shapes are small and do not divide the
vector widths, so tails and guards are exercised.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

import pytvm
from pytvm import te, topi
from pytvm.testing.te_eval import evaluate

pytestmark = pytest.mark.needs_cc

Arr = np.ndarray[Any, Any]


@dataclass
class Case:
    """One operator: its inputs, outputs and schedule."""

    name: str
    inputs: list[te.Tensor]
    outputs: list[te.Tensor]
    schedule: Callable[[list[te.Tensor]], Any]
    positive: bool = False


def _ph(shape: tuple[int, ...], name: str, dtype: str = "float32") -> te.Tensor:
    return te.placeholder(shape, dtype, name)


def _unary_cases() -> list[Case]:
    cases = []
    pos = {"log", "sqrt", "rsqrt"}
    for op in (
        "exp",
        "log",
        "sqrt",
        "rsqrt",
        "tanh",
        "sigmoid",
        "erf",
        "abs",
        "negative",
        "floor",
        "ceil",
        "round",
    ):
        x = _ph((3, 13), "x")
        cases.append(
            Case(
                op, [x], [getattr(topi, op)(x)], topi.generic.schedule_injective, positive=op in pos
            )
        )
    for op, kw in (
        ("relu", {}),
        ("leaky_relu", {"alpha": 0.2}),
        ("hard_swish", {}),
        ("hard_sigmoid", {}),
        ("gelu", {}),
        ("gelu", {"approximate": "tanh"}),
    ):
        x = _ph((2, 3, 11), "x")
        name = f"nn_{op}_{'_'.join(str(v) for v in kw.values()) if op == 'gelu' else ''}"
        cases.append(
            Case(name, [x], [getattr(topi.nn, op)(x, **kw)], topi.generic.schedule_injective)
        )
    x = _ph((19,), "x")
    cases.append(Case("clip", [x], [topi.clip(x, -0.5, 0.5)], topi.generic.schedule_injective))
    cases.append(Case("cast", [x], [topi.cast(x, "int32")], topi.generic.schedule_injective))
    return cases


def _binary_cases() -> list[Case]:
    cases = []
    for op in ("add", "subtract", "multiply", "divide", "power", "maximum", "minimum"):
        a, b = _ph((3, 1, 9), "a"), _ph((5, 1), "b")
        cases.append(
            Case(
                op,
                [a, b],
                [getattr(topi, op)(a, b)],
                topi.generic.schedule_injective,
                positive=op == "power",
            )
        )
    return cases


def _shape_cases() -> list[Case]:
    inj = topi.generic.schedule_injective
    x = _ph((2, 3, 10), "x")
    y = _ph((2, 5, 10), "y")
    idx = te.placeholder((2, 3), "int32", "idx")
    cond = te.placeholder((3, 1), "bool", "cond")
    w = _ph((10,), "w")
    parts = topi.split(y, [1, 4], axis=1)
    return [
        Case("reshape", [x], [topi.reshape(x, (6, -1))], inj),
        Case("transpose", [x], [topi.transpose(x, (2, 0, 1))], inj),
        Case("concatenate", [x, y], [topi.concatenate([x, y], axis=1)], inj),
        Case("split", [y], parts, inj),
        Case("strided_slice", [y], [topi.strided_slice(y, [-1, 9], [0, 0], [-2, -3], [1, 2])], inj),
        Case("take_clip", [x, idx], [topi.take(x, idx, axis=2, mode="clip")], inj),
        Case("take_wrap", [x, idx], [topi.take(x, idx, axis=1, mode="wrap")], inj),
        Case("expand_dims", [x], [topi.expand_dims(x, 1, 2)], inj),
        Case("squeeze", [x], [topi.squeeze(topi.expand_dims(x, 0), 0)], inj),
        Case("where", [cond, w, x], [topi.where(cond, w, x)], inj),
        Case("flatten", [x], [topi.nn.flatten(x)], inj),
        Case("tile", [x], [topi.tile(x, (2, 1, 3))], inj),
        Case("broadcast_to", [w], [topi.broadcast_to(w, (3, 4, 10))], inj),
        Case("pad", [x], [topi.nn.pad(x, (0, 1, 2), (1, 0, 3), 0.5)], inj),
    ]


def _reduce_cases() -> list[Case]:
    red = topi.generic.schedule_reduce
    cases = []
    for op in ("sum", "max", "min", "mean", "prod", "argmax", "argmin"):
        x = _ph((3, 7, 5), "x")
        cases.append(Case(f"{op}_axis1", [x], [getattr(topi, op)(x, 1)], red))
        x2 = _ph((3, 7, 5), "x")
        cases.append(Case(f"{op}_all", [x2], [getattr(topi, op)(x2, None, True)], red))
    x = _ph((3, 7, 5), "x")
    cases.append(Case("sum_02", [x], [topi.sum(x, (0, 2))], red))
    return cases


def _nn_cases() -> list[Case]:
    x86 = topi.x86
    a, w, b = _ph((37, 19), "a"), _ph((45, 19), "w"), _ph((45,), "b")
    bt, bw = _ph((19, 45), "bt"), _ph((19, 64), "bw")
    packed = _ph((2, 19, 8), "packed")
    ba, bb = _ph((3, 5, 7), "ba"), _ph((3, 9, 7), "bb")
    bn = _ph((1, 7, 32), "bn")
    img = _ph((1, 4, 9, 11), "img")
    ker = _ph((6, 4, 3, 3), "ker")
    gker = _ph((6, 2, 3, 3), "gker")
    dker = _ph((4, 2, 3, 3), "dker")
    cb = _ph((6, 1, 1), "cb")
    conv = topi.nn.conv2d_nchw(img, ker, 1, 1, 1)
    gamma, beta = _ph((11,), "gamma"), _ph((11,), "beta")
    mean, var = _ph((4,), "mean"), _ph((4,), "var")
    g4, b4 = _ph((4,), "g4"), _ph((4,), "b4")
    return [
        Case("dense_bias", [a, w, b], [topi.nn.dense(a, w, b)], x86.schedule_dense),
        Case("matmul_nn", [a, bt], [topi.nn.matmul(a, bt)], x86.schedule_matmul),
        Case("matmul_nn_panels", [a, bw], [topi.nn.matmul(a, bw)], x86.schedule_matmul),
        Case(
            "dense_pack",
            [a, w, b],
            [topi.nn.relu(topi.nn.dense_pack(a, w, b))],
            x86.schedule_dense_pack,
        ),
        Case(
            "dense_prepacked",
            [a, packed],
            [topi.nn.dense_pack(a, packed, units=13)],
            x86.schedule_dense_pack,
        ),
        Case(
            "batch_matmul_nt", [ba, bb], [topi.nn.batch_matmul(ba, bb)], x86.schedule_batch_matmul
        ),
        Case(
            "batch_matmul_nn",
            [ba, bn],
            [topi.nn.batch_matmul(ba, bn, transpose_b=False)],
            x86.schedule_batch_matmul,
        ),
        Case(
            "conv2d_bias_relu",
            [img, ker, cb],
            [topi.nn.relu(topi.add(conv, cb))],
            x86.schedule_conv2d_nchw,
        ),
        Case(
            "conv2d_s2_d2",
            [img, ker],
            [topi.nn.conv2d_nchw(img, ker, 2, (1, 2, 0, 1), 2)],
            x86.schedule_conv2d_nchw,
        ),
        Case(
            "group_conv2d",
            [img, gker],
            [topi.nn.group_conv2d_nchw(img, gker, 1, 1, 1, 2)],
            x86.schedule_group_conv2d_nchw,
        ),
        Case(
            "depthwise",
            [img, dker],
            [topi.nn.depthwise_conv2d_nchw(img, dker, (1, 2), 1, 1)],
            x86.schedule_depthwise_conv2d_nchw,
        ),
        Case(
            "max_pool_ceil",
            [img],
            [topi.nn.pool2d(img, (3, 3), (2, 2), (1, 1), (1, 1, 0, 0), "max", True)],
            x86.schedule_pool,
        ),
        Case(
            "avg_pool",
            [img],
            [
                topi.nn.pool2d(
                    img, (3, 2), (2, 1), (1, 1), (1, 0, 1, 1), "avg", False, "NCHW", False
                )
            ],
            x86.schedule_pool,
        ),
        Case("global_avg", [img], [topi.nn.global_pool(img, "avg")], x86.schedule_adaptive_pool),
        Case(
            "adaptive_max",
            [img],
            [topi.nn.adaptive_pool(img, (2, 3), "max")],
            x86.schedule_adaptive_pool,
        ),
        Case("softmax", [img], [topi.nn.softmax(img)], x86.schedule_softmax),
        Case("softmax_axis1", [img], [topi.nn.softmax(img, 1)], x86.schedule_softmax),
        Case("log_softmax", [img], [topi.nn.log_softmax(img)], x86.schedule_log_softmax),
        Case(
            "layer_norm",
            [img, gamma, beta],
            [topi.nn.layer_norm(img, gamma, beta, -1)],
            x86.schedule_layer_norm,
        ),
        Case(
            "batch_norm",
            [img, g4, b4, mean, var],
            [topi.nn.batch_norm(img, g4, b4, mean, var)[0]],
            topi.generic.schedule_injective,
            positive=True,
        ),
        Case(
            "resize_nearest",
            [img],
            [
                topi.image.resize2d(
                    img,
                    None,
                    (13, 7),
                    method="nearest_neighbor",
                    coordinate_transformation_mode="asymmetric",
                )
            ],
            topi.generic.schedule_injective,
        ),
        Case(
            "resize_linear",
            [img],
            [topi.image.resize2d(img, None, (17, 5))],
            topi.generic.schedule_injective,
        ),
    ]


CASES = [*_unary_cases(), *_binary_cases(), *_shape_cases(), *_reduce_cases(), *_nn_cases()]
RNG = np.random.default_rng(7)


def _input(t: te.Tensor, positive: bool) -> Arr:
    shape = tuple(int(str(d)) for d in t.shape)
    if t.dtype == "bool":
        return RNG.integers(0, 2, shape).astype(bool)
    if t.dtype.startswith("int"):
        return RNG.integers(-4, 9, shape).astype(t.dtype)
    lo = 0.2 if positive else -2.0
    return RNG.uniform(lo, 2.0, shape).astype(t.dtype)


def _symbol(case: Case) -> str:
    """The kernel's C name (prefixed: ``floor`` or ``exp`` would clash with libm)."""
    return f"topi_{case.name}"


@pytest.fixture(scope="module")
def built() -> dict[str, Any]:
    """Lower every case (keeping each one's error) and build the lowered ones in one module."""
    funcs: dict[str, Any] = {}
    errors: dict[str, BaseException] = {}
    for case in CASES:
        try:
            s = case.schedule(case.outputs)
            funcs[_symbol(case)] = te.lower_schedule(
                s, [*case.inputs, *case.outputs], _symbol(case)
            )
        except Exception as err:  # reported by the case's own test
            errors[case.name] = err
    mod = pytvm.build(pytvm.tir.IRModule(funcs), target="c") if funcs else None
    return {"mod": mod, "errors": errors}


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_operator_builds_and_matches_reference(case: Case, built: dict[str, Any]) -> None:
    if case.name in built["errors"]:
        raise built["errors"][case.name]
    inputs = {t: _input(t, case.positive) for t in case.inputs}
    want = evaluate(case.outputs, inputs)
    args = [pytvm.nd.array(v) for v in inputs.values()]
    outs = [pytvm.nd.empty(w.shape, str(w.dtype)) for w in want]
    built["mod"][_symbol(case)](*args, *outs)
    for got, ref in zip(outs, want, strict=True):
        np.testing.assert_allclose(got.numpy(), ref, rtol=2e-5, atol=2e-5)


def test_symbolic_batch_runs_for_any_size() -> None:
    n = te.var("n")
    x = te.placeholder((n, 37), name="x")
    b = te.placeholder((37,), name="b")
    y = topi.nn.relu(topi.add(x, b))
    s = topi.generic.schedule_injective(y)
    mod = pytvm.build(s, [x, b, y], target="c", name="topi_symbolic_relu")
    for rows in (1, 5):
        xv, bv = _input(te.placeholder((rows, 37)), False), _input(b, False)
        out = pytvm.nd.empty((rows, 37), "float32")
        mod["topi_symbolic_relu"](pytvm.nd.array(xv), pytvm.nd.array(bv), out)
        np.testing.assert_allclose(out.numpy(), np.maximum(xv + bv, 0), rtol=1e-6)
