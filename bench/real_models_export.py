"""The real-model suite's architectures and their export to ONNX (opset 17, batch 1, fixed shapes).

Every model is built with a fixed seed and random weights (nothing is downloaded): torchvision's
classification, segmentation and transformer models, and the text, speech, OCR, segmentation and
sequence models of ``bench/real_nets.py``; and models derived from those as users derive them
(``bench/real_derived.py``: ONNX Runtime's transformer optimizer, int8 quantization). Batch-norm
statistics and parameters that their initialisers leave at zero (ViT's head, class token) are
drawn at random too, so that no output is trivially constant. Each model is written as
``<name>.onnx`` in the cache directory (default ``~/.cache/pytvm/real-models``); a model whose
export fails leaves ``<name>.error`` instead. The ranges of integer inputs (token ids, masks) are
kept in the model's ``metadata_props``.

The registry (``MODELS``) imports nothing heavy, so ``bench/real_models.py`` reads it under
pytvm's interpreter; the export itself needs torch and torchvision and runs under ``--torch-python``
(see ``bench/real_models.py``): ``python bench/real_models_export.py [--out DIR] [--only NAME...]``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

DEFAULT_DIR = Path.home() / ".cache" / "pytvm" / "real-models"
TORCH_PYTHON = Path("/work/venv-tvm018/bin/python")
OPSET = 17
INPUT_RANGES_KEY = "pytvm.bench.input_ranges"


@dataclass(frozen=True)
class Input:
    """One graph input: its name, shape, and for integer inputs the range ``[low, high)``."""

    name: str
    shape: tuple[int, ...]
    int_range: tuple[int, int] | None = None


@dataclass(frozen=True)
class Spec:
    """One architecture of the suite: what it is, how to build it (a torch module, or from
    another model's ONNX file), its inputs and how close pytvm must come to ONNX Runtime.
    """

    name: str
    family: str
    build: Callable[[], Any] | None = field(repr=False)  # None: derived from ``source``
    inputs: tuple[Input, ...]
    source: str | None = None
    derive: Callable[[Path, Path, Spec], None] | None = field(default=None, repr=False)
    rtol: float = 1e-3  # the largest |pytvm - ORT| / the output's largest magnitude accepted


def _image(size: int = 224) -> tuple[Input, ...]:
    return (Input("image", (1, 3, size, size)),)


def _torchvision(name: str, **kwargs: Any) -> Callable[[], Any]:
    def build() -> Any:
        models = importlib.import_module("torchvision.models")
        return getattr(models, name)(weights=None, **kwargs)

    return build


def _segmentation(name: str) -> Callable[[], Any]:
    def build() -> Any:
        seg = importlib.import_module("torchvision.models.segmentation")
        nets = _nets()
        return nets.OutOnly(getattr(seg, name)(weights=None, weights_backbone=None))

    return build


def _vit(layers: int, heads: int, dim: int) -> Callable[[], Any]:
    def build() -> Any:
        vit = importlib.import_module("torchvision.models.vision_transformer")
        return vit.VisionTransformer(224, 16, layers, heads, dim, 4 * dim)

    return build


def _nets() -> Any:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    return importlib.import_module("real_nets")


def _net(cls: str, **kwargs: Any) -> Callable[[], Any]:
    def build() -> Any:
        return getattr(_nets(), cls)(**kwargs)

    return build


def _derived() -> Any:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    return importlib.import_module("real_derived")


def _fused(num_heads: int, hidden: int) -> Callable[[Path, Path, Spec], None]:
    def derive(src: Path, dst: Path, spec: Spec) -> None:
        _derived().ort_fused(src, dst, "bert", num_heads, hidden)

    return derive


def _int8(qdq: bool) -> Callable[[Path, Path, Spec], None]:
    def derive(src: Path, dst: Path, spec: Spec) -> None:
        rng = np.random.default_rng(2)
        feeds = [
            {i.name: rng.standard_normal(i.shape).astype(np.float32) for i in spec.inputs}
            for _ in range(4)
        ]
        _derived().quantized(src, dst, feeds, qdq)

    return derive


#: int8 models may differ from ONNX Runtime by a few quantization steps of the output (a step is
#: about 1/255 of its range)
INT8_RTOL = 0.02


def _tokens(*names: str, vocab: int, seq: int) -> tuple[Input, ...]:
    ranges = {"attention_mask": (0, 2)}
    return tuple(Input(n, (1, seq), ranges.get(n, (0, vocab))) for n in names)


_VISION: tuple[tuple[str, dict[str, Any], int], ...] = (
    ("resnet50", {}, 224),
    ("resnext50_32x4d", {}, 224),
    ("mobilenet_v2", {}, 224),
    ("mobilenet_v3_small", {}, 224),
    ("mobilenet_v3_large", {}, 224),
    ("efficientnet_b0", {}, 224),
    ("squeezenet1_1", {}, 224),
    ("shufflenet_v2_x1_0", {}, 224),
    ("regnet_y_400mf", {}, 224),
    ("mnasnet1_0", {}, 224),
    ("densenet121", {}, 224),
    ("googlenet", {"aux_logits": False, "init_weights": True}, 224),
    ("inception_v3", {"aux_logits": False, "init_weights": True}, 299),
    ("alexnet", {}, 224),
    ("convnext_tiny", {}, 224),
    ("swin_t", {}, 224),
)

MODELS: dict[str, Spec] = {
    spec.name: spec
    for spec in (
        *(Spec(n, "vision", _torchvision(n, **kw), _image(size)) for n, kw, size in _VISION),
        Spec(
            "lraspp_mobilenet_v3",
            "segmentation",
            _segmentation("lraspp_mobilenet_v3_large"),
            _image(320),
        ),
        Spec("unet", "segmentation", _net("UNet"), _image(256)),
        Spec("deit_small", "vision", _vit(layers=12, heads=6, dim=384), _image(224)),
        Spec(
            "bert_medium",
            "text",
            _net("Bert", layers=8, dim=512, heads=8),
            _tokens("input_ids", "attention_mask", vocab=30522, seq=128),
        ),
        Spec(
            "distilbert",
            "text",
            _net("DistilBert", layers=6),
            _tokens("input_ids", "attention_mask", vocab=30522, seq=128),
        ),
        Spec("gpt2_4l", "text", _net("Gpt2", layers=4), _tokens("input_ids", vocab=50257, seq=64)),
        Spec(
            "whisper_tiny_encoder",
            "speech",
            _net("WhisperEncoder"),
            (Input("input_features", (1, 80, 3000)),),
        ),
        Spec("gru_speech", "speech", _net("GruSpeech"), (Input("input_features", (1, 200, 80)),)),
        Spec("dbnet", "ocr", _net("DbNet"), _image(640)),
        Spec("lstm_tagger", "text", _net("LstmTagger"), _tokens("input_ids", vocab=10000, seq=100)),
        Spec(
            "bert_medium_ort_fused",
            "text",
            None,
            _tokens("input_ids", "attention_mask", vocab=30522, seq=128),
            source="bert_medium",
            derive=_fused(num_heads=8, hidden=512),
        ),
        *(
            Spec(f"{src}_{kind}", "int8", None, _image(224), src, _int8(kind == "qdq"), INT8_RTOL)
            for src, kind in (
                ("mobilenet_v2", "qdq"),
                ("resnet50", "qdq"),
                ("mobilenet_v2", "qlinear"),
            )
        ),
    )
}


def _randomize(model: Any, torch: Any) -> None:
    """Give batch norms random statistics and affine parameters, and every parameter its
    initialiser left at zero small random values (so no layer is an identity or a constant).
    """
    nn = torch.nn
    with torch.no_grad():
        for mod in model.modules():
            if isinstance(mod, nn.BatchNorm1d | nn.BatchNorm2d) and mod.running_mean is not None:
                mod.running_mean.normal_(0.0, 0.1)
                mod.running_var.uniform_(0.5, 1.5)
                if mod.affine:
                    mod.weight.uniform_(0.5, 1.5)
                    mod.bias.normal_(0.0, 0.1)
        for param in model.parameters():
            if not param.any():
                param.normal_(0.0, 0.02)


def export(spec: Spec, out: Path) -> Path:
    """Build ``spec`` with seed 0 (or derive it from its source model, exported first when
    missing) and write ``<out>/<name>.onnx`` (atomically); return it.
    """
    onnx = importlib.import_module("onnx")
    path = out / f"{spec.name}.onnx"
    tmp = out / f".{spec.name}.{os.getpid()}.onnx"
    if spec.derive is not None and spec.source is not None:
        src = out / f"{spec.source}.onnx"
        spec.derive(src if src.exists() else export(MODELS[spec.source], out), tmp, spec)
    else:
        _trace(spec, tmp)
    proto = onnx.load(str(tmp))
    ranges = {inp.name: inp.int_range for inp in spec.inputs if inp.int_range is not None}
    del proto.metadata_props[:]
    entry = proto.metadata_props.add()
    entry.key, entry.value = INPUT_RANGES_KEY, json.dumps(ranges)
    onnx.save(proto, str(tmp))
    tmp.replace(path)
    return path


def _trace(spec: Spec, dst: Path) -> None:
    """Trace ``spec``'s torch module (seed 0, random weights) to ONNX at ``dst``."""
    assert spec.build is not None
    torch = importlib.import_module("torch")
    torch.manual_seed(0)
    model = spec.build().eval()
    _randomize(model, torch)
    gen = torch.Generator().manual_seed(1)
    args = []
    for inp in spec.inputs:
        if inp.int_range is None:
            args.append(torch.randn(inp.shape, generator=gen))
        else:
            low, high = inp.int_range
            args.append(torch.randint(low, high, inp.shape, generator=gen))
    # traced with gradients on: under no_grad, torch's attention takes a fused fast path that
    # has no ONNX export (aten::_native_multi_head_attention)
    torch.onnx.export(
        model,
        tuple(args),
        str(dst),
        input_names=[inp.name for inp in spec.inputs],
        opset_version=OPSET,
        dynamo=False,
    )


def main() -> None:
    """Export every model (or ``--only`` ones) missing from ``--out``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_DIR, help="the cache directory")
    parser.add_argument("--only", nargs="+", choices=sorted(MODELS), help="these models only")
    parser.add_argument("--force", action="store_true", help="export again models already there")
    opts = parser.parse_args()
    opts.out.mkdir(parents=True, exist_ok=True)
    importlib.import_module("warnings").filterwarnings("ignore")
    failed = 0
    for name in opts.only or list(MODELS):
        path, error = opts.out / f"{name}.onnx", opts.out / f"{name}.error"
        if path.exists() and not opts.force:
            continue
        start = time.perf_counter()
        try:
            export(MODELS[name], opts.out)
        except Exception as err:
            failed += 1
            error.write_text(f"{type(err).__name__}: {err}\n{traceback.format_exc()}")
            print(
                f"{name}: export failed: {type(err).__name__}: {(str(err).splitlines() or [''])[0]}"
            )
            continue
        error.unlink(missing_ok=True)
        size = path.stat().st_size / 1e6
        print(f"{name}: {size:.1f} MB in {time.perf_counter() - start:.1f} s", flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
