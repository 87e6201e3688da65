"""ONNX's own backend tests, run against pytvm through ONNX's backend API
(``pytvm.frontend.onnx.backend``): the node tests of every operator the importer converts,
and the PyTorch-exported models (older opsets) built from those operators.

Cases that test what is out of scope are excluded; cases of features not supported yet are
expected to fail (so one that starts passing is reported). The patterns and reasons:
"""

from __future__ import annotations

import warnings

import onnx.backend.test

from pytvm.frontend.onnx.backend import PytvmBackend

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
}  # fmt: skip

#: Out of scope, with the reason.
EXCLUDED = {
    r"bfloat16|BFLOAT16|FLOAT8|FLOAT4|INT4|INT2|float8|_e8m0|_e4m3|_e5m2|float4|_u?int[24]_"
    r"|string|STRING":
        "element types without a numpy/C scalar here (bfloat16, float8, 4- and 2-bit, strings)",
    r"training": "training-mode BatchNormalization and Dropout (inference only)",
    r"test_resize_.*(cubic|tf_crop_and_resize|antialias)":
        "cubic, tf_crop_and_resize and antialiased Resize (nearest and linear are in scope)",
    r"test_einsum_batch_diagonal": "Einsum with a repeated label (a diagonal, not a product)",
    r"test_identity_(opt|sequence)": "sequence and optional values",
    r"test_range_.*_expanded": "Range expanded into Loop (control flow)",
    r"test_split_to_sequence": "SplitToSequence (sequence values)",
}  # fmt: skip

#: Not supported yet (expected to fail), with what is missing.
NOT_YET = {
    r"(averagepool|maxpool|convtranspose|lppool)_3d|Conv3d|Pool3d":
        "3-d convolution and pooling (1-d and 2-d are converted)",
    r"test_maxpool_with_argmax": "MaxPool's Indices output",
}  # fmt: skip

__doc__ = (
    (__doc__ or "")
    + "".join(f"\n- excluded ``{p}``: {why}" for p, why in EXCLUDED.items())
    + "".join(f"\n- expected to fail ``{p}``: {why}" for p, why in NOT_YET.items())
)

backend_test = onnx.backend.test.BackendTest(PytvmBackend, __name__)
for stem in NODE_TESTS.values():
    backend_test.include(rf"^test_{stem}(_.*)?_cpu$")
backend_test.include(r"^test_[A-Z]\w*_cpu$")  # PyTorch-converted models
backend_test.include(r"^test_operator_\w+_cpu$")  # PyTorch operator exports
for pattern in EXCLUDED:
    backend_test.exclude(pattern)
for pattern in NOT_YET:
    backend_test.xfail(pattern)

warnings.filterwarnings("ignore", category=RuntimeWarning, module="onnx")
globals().update(backend_test.test_cases)
