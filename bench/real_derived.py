"""Models derived from the suite's exports the way users derive the models they then share: ONNX
Runtime's transformer optimizer (``com.microsoft`` fused operators: ``Attention``,
``SkipLayerNormalization``, ``BiasGelu``) and ONNX Runtime's static int8 quantization (QDQ
``QuantizeLinear``/``DequantizeLinear`` pairs, or QOperator ``QLinearConv``/``QGemm``...),
calibrated on seeded random inputs.

Runs under the export interpreter (``bench/real_models_export.py``), which has onnxruntime's
tools; nothing here is measured.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np


def ort_fused(src: Path, dst: Path, model_type: str, num_heads: int, hidden: int) -> None:
    """``src`` through ``onnxruntime.transformers.optimizer`` (CPU, fusions only) into ``dst``."""
    from onnxruntime.transformers import optimizer  # type: ignore[import-untyped]

    model = optimizer.optimize_model(
        str(src),
        model_type=model_type,
        num_heads=num_heads,
        hidden_size=hidden,
        opt_level=1,
        use_gpu=False,
    )
    model.save_model_to_file(str(dst))


class _Reader:
    """The calibration inputs, one dict of arrays per run (onnxruntime's data reader protocol)."""

    def __init__(self, feeds: list[dict[str, np.ndarray]]) -> None:
        self._feeds = iter(feeds)

    def get_next(self) -> dict[str, np.ndarray] | None:
        return next(self._feeds, None)


def quantized(src: Path, dst: Path, feeds: list[dict[str, np.ndarray]], qdq: bool) -> None:
    """``src`` quantized to int8 (uint8 activations, per-channel int8 weights, MinMax
    calibration over ``feeds``) in QDQ or QOperator format into ``dst``.
    """
    from onnxruntime.quantization import (  # type: ignore[import-untyped]
        QuantFormat,
        QuantType,
        quantize_static,
    )
    from onnxruntime.quantization.shape_inference import (  # type: ignore[import-untyped]
        quant_pre_process,
    )

    with tempfile.TemporaryDirectory() as tmp:
        pre = Path(tmp) / "pre.onnx"
        quant_pre_process(str(src), str(pre))
        quantize_static(
            str(pre),
            str(dst),
            _Reader(feeds),
            quant_format=QuantFormat.QDQ if qdq else QuantFormat.QOperator,
            activation_type=QuantType.QUInt8,
            weight_type=QuantType.QInt8,
            per_channel=True,
        )
