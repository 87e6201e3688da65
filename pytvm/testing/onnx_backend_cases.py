"""The selection of ONNX's backend tests pytvm runs (for tests): which operators' node tests,
which cases are out of scope and which are expected to fail, each with its reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["EXCLUDED", "NODE_TESTS", "NOT_YET", "backend_test", "describe"]

#: Test-name stems of the node tests of each converted operator (``test_<stem>...``).
NODE_TESTS = {
    "Abs": "abs", "Add": "add", "And": "and", "ArgMax": "argmax", "ArgMin": "argmin",
    "AveragePool": "averagepool", "BatchNormalization": "batchnorm", "Cast": "cast",
    "CastLike": "castlike", "Ceil": "ceil", "Celu": "celu", "Clip": "clip", "Concat": "concat",
    "Constant": "constant", "ConstantOfShape": "constantofshape", "Conv": "(basic_)?conv",
    "ConvTranspose": "convtranspose", "DepthToSpace": "depthtospace", "Div": "div",
    "Dropout": "dropout", "Einsum": "einsum", "Elu": "elu", "Equal": "equal", "Erf": "erf",
    "Exp": "exp", "Expand": "expand", "Flatten": "flatten", "Floor": "floor", "Gather": "gather",
    "Gelu": "gelu", "Gemm": "gemm", "GlobalAveragePool": "globalaveragepool",
    "GlobalMaxPool": "globalmaxpool", "Greater": "greater", "HardSigmoid": "hardsigmoid",
    "HardSwish": "hardswish", "Identity": "identity", "InstanceNormalization": "instancenorm",
    "IsNaN": "isnan", "LayerNormalization": "layer_normalization", "LeakyRelu": "leakyrelu",
    "Less": "less", "Log": "log", "LogSoftmax": "logsoftmax", "LRN": "lrn", "MatMul": "matmul",
    "Max": "max", "MaxPool": "maxpool", "Mean": "mean", "Min": "min", "Mish": "mish",
    "Mod": "mod", "Mul": "mul", "Neg": "neg", "Not": "not", "Or": "or",
    "Pad": "(constant|edge|reflect|wrap)_pad", "Pow": "pow", "PRelu": "prelu", "Range": "range",
    "Reciprocal": "reciprocal", "ReduceL1": "reduce_l1", "ReduceL2": "reduce_l2",
    "ReduceLogSum": "reduce_log_sum", "ReduceMax": "reduce_max", "ReduceMean": "reduce_mean",
    "ReduceMin": "reduce_min", "ReduceProd": "reduce_prod", "ReduceSum": "reduce_sum",
    "ReduceSumSquare": "reduce_sum_square", "Relu": "relu", "Reshape": "reshape",
    "Resize": "resize", "Round": "round", "Selu": "selu", "Shape": "shape", "Sigmoid": "sigmoid",
    "Sign": "sign", "Sin": "sin", "Cos": "cos", "Tan": "tan", "Sinh": "sinh", "Cosh": "cosh",
    "Asinh": "asinh", "Acosh": "acosh", "Atanh": "atanh", "Size": "size", "Slice": "slice",
    "Softmax": "softmax", "Softplus": "softplus", "Softsign": "softsign",
    "SpaceToDepth": "spacetodepth", "Split": "split", "Sqrt": "sqrt", "Squeeze": "squeeze",
    "Sub": "sub", "Sum": "sum", "Tanh": "tanh", "ThresholdedRelu": "thresholdedrelu",
    "Tile": "tile", "Transpose": "transpose", "Unsqueeze": "unsqueeze", "Upsample": "upsample",
    "Where": "where", "Xor": "xor", "GatherElements": "gather_elements", "GatherND": "gathernd",
    "CumSum": "cumsum", "OneHot": "onehot", "Trilu": "tri[lu]", "EyeLike": "eyelike",
    "Hardmax": "hardmax", "NonZero": "nonzero", "Compress": "compress",
    "GroupNormalization": "group_normalization", "MeanVarianceNormalization": "mvn",
    "LpNormalization": "l[12p]normalization", "QuantizeLinear": "quantizelinear",
    "DequantizeLinear": "dequantizelinear", "IsInf": "isinf", "Shrink": "shrink",
    "Swish": "swish", "LpPool": "lppool",
    "LSTM": "lstm", "GRU": "gru", "RNN": "(simple_rnn|rnn_seq_length)",
    "If": "if", "Loop": r"loop\d*",
    "QLinearConv": "qlinearconv", "ConvInteger": "convinteger",
    "DynamicQuantizeLinear": "dynamicquantizelinear", "MatMulInteger": "matmulinteger",
    "QLinearMatMul": "qlinearmatmul",
}  # fmt: skip

#: Out of scope, with the reason.
EXCLUDED = {
    r"bfloat16|BFLOAT16|FLOAT8|FLOAT4|INT4|INT2|float8|_e8m0|_e4m3|_e5m2|float4|_u?int[24]_"
    r"|string|STRING":
        "element types without a numpy/C scalar here (bfloat16, float8, 4- and 2-bit, strings)",
    r"training": "training-mode BatchNormalization and Dropout (inference only)",
    r"test_resize_.*(tf_crop_and_resize|antialias)":
        "tf_crop_and_resize and antialiased Resize (nearest, linear and cubic are in scope)",
    r"test_einsum_batch_diagonal": "Einsum with a repeated label (a diagonal, not a product)",
    r"test_identity_(opt|sequence)": "sequence and optional values",
    r"test_(if_seq|if_opt|loop13_seq|loop16_seq_none)": "If and Loop over sequences, optionals",
    r"test_split_to_sequence": "SplitToSequence (sequence values)",
}  # fmt: skip

#: Not supported yet (expected to fail), with what is missing.
NOT_YET: dict[str, str] = {}


def describe(excluded: Mapping[str, str], not_yet: Mapping[str, str]) -> str:
    """The patterns and their reasons, as lines of a docstring."""
    lines = [f"\n- excluded ``{p}``: {why}" for p, why in excluded.items()]
    lines += [f"\n- expected to fail ``{p}``: {why}" for p, why in not_yet.items()]
    return "".join(lines)


def backend_test(backend: Any, module: str, not_yet: Mapping[str, str] | None = None) -> Any:
    """An ``onnx.backend.test.BackendTest`` of ``backend`` for test module ``module``: the node
    tests of :data:`NODE_TESTS`, the PyTorch-exported models, :data:`EXCLUDED` skipped and
    :data:`NOT_YET` (plus ``not_yet``) expected to fail.
    """
    import onnx.backend.test

    test = onnx.backend.test.BackendTest(backend, module)
    for stem in NODE_TESTS.values():
        test.include(rf"^test_{stem}(_.*)?_cpu$")
    test.include(r"^test_[A-Z]\w*_cpu$")  # PyTorch-converted models
    test.include(r"^test_operator_\w+_cpu$")  # PyTorch operator exports
    for pattern in EXCLUDED:
        test.exclude(pattern)
    for pattern in {**NOT_YET, **(not_yet or {})}:
        test.xfail(pattern)
    return test
