"""A small BERT built from standard ONNX operators, fused by ONNX Runtime's transformer optimizer
(``EmbedLayerNormalization``, ``Attention``, ``SkipLayerNormalization``, ``BiasGelu``): pytvm
imports the fused model and matches onnxruntime on it and on the unfused original.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.transformers.fusion_options import FusionOptions  # type: ignore[import-untyped]
from onnxruntime.transformers.optimizer import optimize_model  # type: ignore[import-untyped]

from pytvm import relay

_HIDDEN, _HEADS, _SEQ, _BATCH, _VOCAB, _FFN = 32, 4, 8, 2, 50, 64


class _Builder:
    """Nodes and initializers of a graph under construction."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.inits: list[onnx.TensorProto] = []
        self.nodes: list[onnx.NodeProto] = []

    def weight(self, name: str, *shape: int, scale: float = 0.2) -> str:
        value = (self.rng.standard_normal(shape) * scale).astype("float32")
        return self.const(name, value)

    def const(self, name: str, value: Any) -> str:
        self.inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def node(self, op: str, inputs: list[str], out: str, **attrs: Any) -> str:
        self.nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
        return out

    def layer_norm(self, x: str, name: str) -> str:
        gamma = (1 + 0.1 * self.rng.standard_normal(_HIDDEN)).astype("float32")
        ins = [x, self.const(name + "_g", gamma), self.weight(name + "_b", _HIDDEN, scale=0.1)]
        return self.node("LayerNormalization", ins, name, axis=-1, epsilon=1e-12)

    def linear(self, x: str, name: str, n_in: int, n_out: int) -> str:
        y = self.node("MatMul", [x, self.weight(name + "_w", n_in, n_out)], name + "_mm")
        return self.node("Add", [y, self.weight(name + "_b", n_out, scale=0.1)], name)


def _encoder_layer(b: _Builder, x: str, mask: str, p: str) -> str:
    head = _HIDDEN // _HEADS
    shape4 = b.const(p + "shape4", np.array([0, 0, _HEADS, head], dtype="int64"))
    shape3 = b.const(p + "shape3", np.array([0, 0, _HIDDEN], dtype="int64"))

    def heads(name: str, perm: list[int]) -> str:
        y = b.node("Reshape", [b.linear(x, p + name, _HIDDEN, _HIDDEN), shape4], p + name + "_r")
        return b.node("Transpose", [y], p + name + "_t", perm=perm)

    q, k, v = heads("q", [0, 2, 1, 3]), heads("k", [0, 2, 3, 1]), heads("v", [0, 2, 1, 3])
    scores = b.node("MatMul", [q, k], p + "qk")
    root = b.const(p + "root", np.array(np.sqrt(head), dtype="float32"))
    scores = b.node("Add", [b.node("Div", [scores, root], p + "qk_s"), mask], p + "qk_m")
    probs = b.node("Softmax", [scores], p + "probs", axis=-1)
    ctx = b.node(
        "Transpose", [b.node("MatMul", [probs, v], p + "ctx")], p + "ctx_t", perm=[0, 2, 1, 3]
    )
    ctx = b.node("Reshape", [ctx, shape3], p + "ctx_r")
    x = b.layer_norm(
        b.node("Add", [b.linear(ctx, p + "o", _HIDDEN, _HIDDEN), x], p + "r1"), p + "ln1"
    )
    f = b.linear(x, p + "f1", _HIDDEN, _FFN)
    g = b.node("Div", [f, b.const(p + "sqrt2", np.array(np.sqrt(2.0), dtype="float32"))], p + "g0")
    g = b.node("Add", [b.node("Erf", [g], p + "g1"), b.const(p + "one", np.float32(1.0))], p + "g2")
    g = b.node(
        "Mul", [b.node("Mul", [f, g], p + "g3"), b.const(p + "half", np.float32(0.5))], p + "g4"
    )
    f = b.linear(g, p + "f2", _FFN, _HIDDEN)
    return b.layer_norm(b.node("Add", [f, x], p + "r2"), p + "ln2")


def _tiny_bert(layers: int = 2) -> onnx.ModelProto:
    """HF BERT's exported pattern: embeddings + LayerNorm, additive mask, post-LN layers."""
    b = _Builder(0)
    positions = b.const("pos_ids", np.arange(_SEQ, dtype="int64").reshape(1, _SEQ))
    emb = b.node("Gather", [b.weight("word_emb", _VOCAB, _HIDDEN), "input_ids"], "word")
    emb = b.node(
        "Add", [emb, b.node("Gather", [b.weight("pos_emb", _SEQ, _HIDDEN), positions], "pos")], "wp"
    )
    seg = b.node("Gather", [b.weight("seg_emb", 2, _HIDDEN), "token_type_ids"], "seg")
    x = b.layer_norm(b.node("Add", [emb, seg], "emb"), "emb_ln")
    mask = b.node("Unsqueeze", ["attention_mask", b.const("ax1", np.array([1]))], "m3")
    mask = b.node("Unsqueeze", [mask, b.const("ax2", np.array([2]))], "m4")
    mask = b.node("Sub", [b.const("one", np.float32(1.0)), mask], "minv")
    mask = b.node("Mul", [mask, b.const("neg", np.float32(-10000.0))], "mask")
    for i in range(layers):
        x = _encoder_layer(b, x, mask, f"l{i}_")
    b.nodes[-1].output[0] = "last_hidden_state"
    ids = [
        helper.make_tensor_value_info(n, TensorProto.INT64, [_BATCH, _SEQ])
        for n in ("input_ids", "token_type_ids")
    ]
    ids.append(helper.make_tensor_value_info("attention_mask", TensorProto.FLOAT, [_BATCH, _SEQ]))
    out = helper.make_tensor_value_info(
        "last_hidden_state", TensorProto.FLOAT, [_BATCH, _SEQ, _HIDDEN]
    )
    graph = helper.make_graph(b.nodes, "tiny_bert", ids, [out], b.inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _feeds() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(1)
    return {
        "input_ids": rng.integers(0, _VOCAB, (_BATCH, _SEQ)).astype("int64"),
        "token_type_ids": rng.integers(0, 2, (_BATCH, _SEQ)).astype("int64"),
        "attention_mask": np.array([[1] * _SEQ, [1] * 5 + [0] * (_SEQ - 5)], dtype="float32"),
    }


def _run_pytvm(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> np.ndarray:
    mod, params = relay.frontend.from_onnx(model)
    return relay.create_executor("graph", mod).evaluate()(**feeds, **params).numpy()  # type: ignore[no-any-return]


def test_ort_fused_bert_imports_and_matches_onnxruntime(tmp_path: Path) -> None:
    original = _tiny_bert()
    path = tmp_path / "bert.onnx"
    onnx.save(original, path)
    options = FusionOptions("bert")
    options.enable_shape_inference = False  # symbolic shape inference needs sympy
    fused = optimize_model(
        str(path),
        model_type="bert",
        num_heads=_HEADS,
        hidden_size=_HIDDEN,
        opt_level=0,
        optimization_options=options,
    ).model
    ops = Counter(n.op_type for n in fused.graph.node if n.domain == "com.microsoft")
    assert ops["Attention"] == 2 and ops["SkipLayerNormalization"] == 4
    assert ops["EmbedLayerNormalization"] == 1 and ops["BiasGelu"] == 2
    feeds = _feeds()
    plain = onnxruntime.SessionOptions()
    plain.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    (expected,) = onnxruntime.InferenceSession(fused.SerializeToString(), plain).run(None, feeds)
    (unfused,) = onnxruntime.InferenceSession(original.SerializeToString(), plain).run(None, feeds)
    np.testing.assert_allclose(_run_pytvm(fused, feeds), expected, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(_run_pytvm(original, feeds), unfused, rtol=1e-4, atol=1e-4)
