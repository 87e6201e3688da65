#!/usr/bin/env python3
"""Deterministic ONNX models the size of a microcontroller's (keyword spotting, person detection).

Usage:  python models/make_mcu_models.py OUTDIR [--only kws_cnn,person_detect_cnn] [--no-verify]

Writes OUTDIR/NAME.onnx for NAME in:

kws_cnn
    ARM ML-KWS's "DS-CNN small" shape: 49x10 MFCC features (input ``1x1x49x10``), a 10x4
    stride-2 convolution to 64 channels (batch norm folded into its weights and bias) + ReLU,
    four depthwise-separable blocks of 64 channels (3x3 depthwise + ReLU, 1x1 pointwise + ReLU),
    global average pool, dense to 12 classes, softmax.
person_detect_cnn
    A MobileNetV1-0.25 shape on 96x96 grayscale (input ``1x1x96x96``): a 3x3 stride-2 stem to 8
    channels, 13 depthwise-separable blocks growing to 256 channels with 4 more stride-2 steps
    (96 -> 48 -> 24 -> 12 -> 6 -> 3), global average pool, dense to 2 classes, softmax.

kws_cnn_int8, person_detect_cnn_int8
    The same models quantized to int8 by ONNX Runtime's ``quantize_static`` (QDQ format, int8
    activations and per-channel int8 weights, MinMax calibration on the inputs of seeds 0-7):
    DequantizeLinear -> op -> QuantizeLinear around every convolution and the dense layer.

Both use TensorFlow's "SAME" padding (asymmetric for stride 2, as converted TFLite models have),
batch norm folded into the convolutions, opset 17, float32 inputs and outputs, batch 1, weights
from fixed seeds (no downloads). Each model is checked with onnx.checker and run once with ONNX
Runtime unless ``--no-verify``; the script prints its MACs and parameter bytes.
"""

from __future__ import annotations

import argparse
import logging
import math
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
IR_VERSION = 8  # opset 17 without needing the newest runtimes


def same_pads(size: tuple[int, int], kernel: tuple[int, int], stride: int) -> list[int]:
    """ONNX ``pads`` (``[top, left, bottom, right]``) of TensorFlow's SAME padding."""
    begin, end = [], []
    for n, k in zip(size, kernel, strict=True):
        out = -(-n // stride)
        total = max((out - 1) * stride + k - n, 0)
        begin.append(total // 2)
        end.append(total - total // 2)
    return begin + end


class McuGraphBuilder:
    """Nodes and initializers of one model, with the tensor's spatial size tracked for padding."""

    def __init__(self, name: str, seed: int) -> None:
        self.name = name
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.counter: dict[str, int] = {}

    def uniq(self, prefix: str) -> str:
        """A fresh name starting with ``prefix``."""
        n = self.counter.get(prefix, 0)
        self.counter[prefix] = n + 1
        return f"{prefix}_{n}"

    def const(self, prefix: str, arr: np.ndarray) -> str:
        """An initializer holding ``arr``; its name."""
        name = self.uniq(prefix)
        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(arr), name))
        return name

    def node(self, op: str, inputs: list[str], prefix: str, **attrs: Any) -> str:
        """One node of ``op``; the name of its output."""
        out = self.uniq(prefix + "_out")
        self.nodes.append(helper.make_node(op, inputs, [out], name=self.uniq(prefix), **attrs))
        return out

    def conv_bn_relu(
        self,
        x: str,
        size: tuple[int, int],
        cin: int,
        cout: int,
        kernel: tuple[int, int],
        stride: int = 1,
        group: int = 1,
    ) -> tuple[str, tuple[int, int]]:
        """Conv with batch norm folded into its weights and bias, then ReLU; output and size."""
        fan_in = (cin // group) * kernel[0] * kernel[1]
        shape = (cout, cin // group, *kernel)
        weight = self.rng.standard_normal(shape) * math.sqrt(2.0 / fan_in)
        gamma = self.rng.uniform(0.5, 1.5, cout)
        beta = self.rng.standard_normal(cout) * 0.1
        mean = self.rng.standard_normal(cout) * 0.1
        var = self.rng.uniform(0.5, 1.5, cout)
        scale = gamma / np.sqrt(var + 1e-3)
        w = (weight * scale[:, None, None, None]).astype(np.float32)
        b = (beta - mean * scale).astype(np.float32)
        y = self.node(
            "Conv",
            [x, self.const("conv_w", w), self.const("conv_b", b)],
            "conv",
            kernel_shape=list(kernel),
            strides=[stride, stride],
            pads=same_pads(size, kernel, stride),
            group=group,
        )
        out_size = (-(-size[0] // stride), -(-size[1] // stride))
        return self.node("Relu", [y], "relu"), out_size

    def separable(
        self, x: str, size: tuple[int, int], cin: int, cout: int, stride: int
    ) -> tuple[str, tuple[int, int]]:
        """MobileNet's depthwise-separable block: 3x3 depthwise + ReLU, 1x1 pointwise + ReLU."""
        x, size = self.conv_bn_relu(x, size, cin, cin, (3, 3), stride, group=cin)
        return self.conv_bn_relu(x, size, cin, cout, (1, 1))

    def classifier(self, x: str, channels: int, classes: int) -> str:
        """Global average pool, flatten, dense (``Gemm`` with ``transB``), softmax."""
        x = self.node("GlobalAveragePool", [x], "gap")
        x = self.node("Flatten", [x], "flatten", axis=1)
        w = self.rng.standard_normal((classes, channels)) * math.sqrt(1.0 / channels)
        b = self.rng.standard_normal(classes) * 0.05
        x = self.node(
            "Gemm",
            [x, self.const("fc_w", w.astype(np.float32)), self.const("fc_b", b.astype(np.float32))],
            "gemm",
            transB=1,
        )
        return self.node("Softmax", [x], "softmax", axis=-1)

    def finish(self, inp_shape: list[int], out: str, out_shape: list[int]) -> onnx.ModelProto:
        """The model: one float32 input ``input``, one output."""
        graph = helper.make_graph(
            self.nodes,
            self.name,
            [helper.make_tensor_value_info("input", TensorProto.FLOAT, inp_shape)],
            [helper.make_tensor_value_info(out, TensorProto.FLOAT, out_shape)],
            initializer=self.inits,
        )
        model = helper.make_model(
            graph,
            producer_name="pytvm-make_mcu_models",
            opset_imports=[helper.make_opsetid("", OPSET)],
        )
        model.ir_version = IR_VERSION
        return model


def make_kws_cnn() -> onnx.ModelProto:
    """DS-CNN small keyword spotting (ML-KWS): 1x1x49x10 MFCC features -> 12 class scores."""
    g = McuGraphBuilder("kws_cnn", seed=22)
    x, size = g.conv_bn_relu("input", (49, 10), 1, 64, (10, 4), stride=2)
    for _ in range(4):
        x, size = g.separable(x, size, 64, 64, 1)
    y = g.classifier(x, 64, 12)
    return g.finish([1, 1, 49, 10], y, [1, 12])


# MobileNetV1's 13 separable blocks (output channels, stride) at width multiplier 0.25
MOBILENET_V1_025 = (
    (16, 1),
    (32, 2),
    (32, 1),
    (64, 2),
    (64, 1),
    (128, 2),
    (128, 1),
    (128, 1),
    (128, 1),
    (128, 1),
    (128, 1),
    (256, 2),
    (256, 1),
)


def make_person_detect_cnn() -> onnx.ModelProto:
    """MobileNetV1-0.25-like person detection: 1x1x96x96 grayscale -> 2 class scores."""
    g = McuGraphBuilder("person_detect_cnn", seed=23)
    x, size = g.conv_bn_relu("input", (96, 96), 1, 8, (3, 3), stride=2)
    cin = 8
    for cout, stride in MOBILENET_V1_025:
        x, size = g.separable(x, size, cin, cout, stride)
        cin = cout
    y = g.classifier(x, cin, 2)
    return g.finish([1, 1, 96, 96], y, [1, 2])


CALIBRATION_SEEDS = range(8)


def quantize_int8(model: onnx.ModelProto) -> onnx.ModelProto:
    """``model`` quantized to int8 QDQ by ONNX Runtime's ``quantize_static`` (int8 activations,
    per-channel int8 weights, MinMax over the inputs of :data:`CALIBRATION_SEEDS`); its graph
    is named ``<name>_int8``.
    """
    from onnxruntime.quantization import (  # type: ignore[import-untyped]
        CalibrationDataReader,
        QuantFormat,
        QuantType,
        quantize_static,
    )

    class Inputs(CalibrationDataReader):  # type: ignore[misc]
        def __init__(self) -> None:
            self._feeds = iter([dict([input_for(model, seed)]) for seed in CALIBRATION_SEEDS])

        def get_next(self) -> dict[str, np.ndarray] | None:
            return next(self._feeds, None)

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "int8.onnx"
        logging.disable(logging.WARNING)  # its advice to run its shape pre-processing first
        try:
            quantize_static(
                model,
                path,
                Inputs(),
                quant_format=QuantFormat.QDQ,
                per_channel=True,
                activation_type=QuantType.QInt8,
                weight_type=QuantType.QInt8,
            )
        finally:
            logging.disable(logging.NOTSET)
        quantized = onnx.load(str(path))
    quantized.graph.name = model.graph.name + "_int8"
    quantized.producer_name = "pytvm-make_mcu_models"
    quantized.producer_version = ""
    return quantized


def make_kws_cnn_int8() -> onnx.ModelProto:
    """:func:`make_kws_cnn` quantized to int8 (QDQ)."""
    return quantize_int8(make_kws_cnn())


def make_person_detect_cnn_int8() -> onnx.ModelProto:
    """:func:`make_person_detect_cnn` quantized to int8 (QDQ)."""
    return quantize_int8(make_person_detect_cnn())


MODELS: dict[str, Callable[[], onnx.ModelProto]] = {
    "kws_cnn": make_kws_cnn,
    "person_detect_cnn": make_person_detect_cnn,
    "kws_cnn_int8": make_kws_cnn_int8,
    "person_detect_cnn_int8": make_person_detect_cnn_int8,
}


def output_step(model: onnx.ModelProto) -> float:
    """The quantization step of the model's output (0.0 for a float output): the scale of the
    DequantizeLinear that produces it. Outputs of int8 builds may differ by one step.
    """
    inits = {t.name: t for t in model.graph.initializer}
    out = model.graph.output[0].name
    for node in model.graph.node:
        if node.op_type == "DequantizeLinear" and node.output[0] == out:
            return float(numpy_helper.to_array(inits[node.input[1]]).max())
    return 0.0


def input_for(model: onnx.ModelProto, seed: int = 0) -> tuple[str, np.ndarray]:
    """``(name, array)``: a deterministic float32 input for the model's single input.

    MFCC-like features (normal, scale 1) for keyword spotting; pixels in [-1, 1) (the range a
    normalized grayscale image has) for the others.
    """
    inp = model.graph.input[0]
    shape = [d.dim_value for d in inp.type.tensor_type.shape.dim]
    rng = np.random.default_rng(seed)
    if model.graph.name.startswith("kws_cnn"):
        data = rng.standard_normal(shape)
    else:
        data = rng.uniform(-1.0, 1.0, shape)
    return inp.name, data.astype(np.float32)


def count_macs(model: onnx.ModelProto) -> int:
    """Multiply-accumulates of the Conv and Gemm nodes (from ONNX shape inference)."""
    inferred = onnx.shape_inference.infer_shapes(model)
    shapes: dict[str, list[int]] = {}
    for vi in [*inferred.graph.value_info, *inferred.graph.input, *inferred.graph.output]:
        shapes[vi.name] = [d.dim_value for d in vi.type.tensor_type.shape.dim]
    for t in inferred.graph.initializer:
        shapes[t.name] = list(t.dims)
    macs = 0
    for n in inferred.graph.node:
        if n.op_type == "Conv":
            w = shapes[n.input[1]]
            macs += int(np.prod(shapes[n.output[0]])) * int(np.prod(w[1:]))
        elif n.op_type == "Gemm":
            a, w = shapes[n.input[0]], shapes[n.input[1]]
            macs += a[0] * w[0] * w[1]
    return macs


def param_bytes(model: onnx.ModelProto) -> int:
    """Bytes of the model's initializers (its weights)."""
    return sum(numpy_helper.to_array(t).nbytes for t in model.graph.initializer)


def verify(model: onnx.ModelProto) -> np.ndarray:
    """Check the model with onnx.checker and run it once with ONNX Runtime; its output."""
    import onnxruntime as ort

    onnx.checker.check_model(model, full_check=True)
    name, x = input_for(model)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    (y,) = sess.run(None, {name: x})
    if not np.all(np.isfinite(y)):
        raise ValueError(f"{model.graph.name}: ONNX Runtime gives non-finite outputs")
    return np.asarray(y)


def main(argv: list[str] | None = None) -> int:
    """Write the models to OUTDIR and print their sizes."""
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("outdir", type=Path)
    ap.add_argument("--only", default="", help="comma-separated subset of " + ",".join(MODELS))
    ap.add_argument("--no-verify", action="store_true")
    args = ap.parse_args(argv)
    names = [n for n in args.only.split(",") if n] or list(MODELS)
    unknown = sorted(set(names) - set(MODELS))
    if unknown:
        ap.error(f"unknown model(s) {unknown}; choose from {sorted(MODELS)}")
    args.outdir.mkdir(parents=True, exist_ok=True)
    for name in names:
        model = MODELS[name]()
        path = args.outdir / f"{name}.onnx"
        onnx.save(model, str(path))
        msg = (
            f"{name:22s} nodes={len(model.graph.node):3d} MACs={count_macs(model):9d}"
            f" param_bytes={param_bytes(model):8d}"
        )
        if not args.no_verify:
            y = verify(model)
            msg += f" ort_out={list(y.shape)} top={int(y.argmax())}"
        print(msg, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
