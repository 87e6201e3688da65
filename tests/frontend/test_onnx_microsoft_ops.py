"""ONNX Runtime's contrib operators (com.microsoft) against onnxruntime: the Gelu family,
the fused normalizations, Attention and MultiHeadAttention, FusedMatMul.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper

from pytvm import relay
from pytvm.frontend.onnx import OnnxImportError, UnsupportedOperatorsError


def _model(op: str, with_bias: bool) -> object:
    inputs = ["x", "bias"] if with_bias else ["x"]
    node = helper.make_node(op, inputs, ["y"], domain="com.microsoft")
    infos = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5])]
    if with_bias:
        infos.append(helper.make_tensor_value_info("bias", TensorProto.FLOAT, [5]))
    graph = helper.make_graph(
        [node], "g", infos, [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 5])]
    )
    return helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
    )


@pytest.mark.parametrize(
    ("op", "with_bias"),
    [("Gelu", False), ("FastGelu", False), ("FastGelu", True), ("BiasGelu", True)],
)
def test_gelu_family_matches_onnxruntime(op: str, with_bias: bool) -> None:
    model = _model(op, with_bias)
    rng = np.random.default_rng(0)
    feeds = {"x": rng.uniform(-4, 4, (2, 5)).astype("float32")}
    if with_bias:
        feeds["bias"] = rng.uniform(-1, 1, 5).astype("float32")
    session = onnxruntime.InferenceSession(model.SerializeToString())  # type: ignore[attr-defined]
    (expected,) = session.run(None, feeds)
    mod, params = relay.frontend.from_onnx(model)
    out = relay.create_executor("graph", mod).evaluate()(**feeds, **params).numpy()
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)


def test_other_contrib_operators_are_listed_as_unsupported() -> None:
    node = helper.make_node("CDist", ["x"], ["y"], domain="com.microsoft")
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
    )
    with pytest.raises(UnsupportedOperatorsError, match=r"com\.microsoft\.CDist"):
        relay.frontend.from_onnx(helper.make_model(graph))


def _contrib_model(
    op: str,
    feeds: dict[str, np.ndarray],
    outputs: list[str],
    domain: str = "com.microsoft",
    inputs: list[str] | None = None,
    **attrs: Any,
) -> onnx.ModelProto:
    """A one-node model of ``op`` over ``feeds`` (names in order; "" skips an input)."""
    names = list(feeds) if inputs is None else inputs
    node = helper.make_node(op, names, outputs, domain=domain, **attrs)
    infos = [
        helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
        for k, v in feeds.items()
    ]
    outs = [onnx.ValueInfoProto(name=o) for o in outputs if o]
    graph = helper.make_graph([node], "g", infos, outs)
    return helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
    )


def _check_against_onnxruntime(
    model: onnx.ModelProto, feeds: dict[str, np.ndarray], atol: float = 1e-5
) -> None:
    session = onnxruntime.InferenceSession(model.SerializeToString())
    expected = session.run(None, feeds)
    mod, params = relay.frontend.from_onnx(model)
    got = relay.create_executor("graph", mod).evaluate()(**feeds, **params)
    got = [got] if len(expected) == 1 else list(got)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g.numpy(), e, rtol=1e-4, atol=atol)


def _normal(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype("float32")


@pytest.mark.parametrize("with_optional", [False, True])
def test_skip_layer_normalization_outputs_match_onnxruntime(with_optional: bool) -> None:
    rng = np.random.default_rng(1)
    feeds = {"x": _normal(rng, 2, 3, 8), "skip": _normal(rng, 2, 3, 8), "gamma": _normal(rng, 8)}
    if with_optional:
        feeds.update(beta=_normal(rng, 8), bias=_normal(rng, 8))
    model = _contrib_model("SkipLayerNormalization", feeds, ["y", "mean", "inv_std", "sum"])
    _check_against_onnxruntime(model, feeds)


def test_skip_simplified_layer_normalization_matches_onnxruntime() -> None:
    rng = np.random.default_rng(2)
    feeds = {
        "x": _normal(rng, 2, 3, 8),
        "skip": _normal(rng, 2, 3, 8),
        "gamma": _normal(rng, 8),
        "bias": _normal(rng, 8),
    }
    model = _contrib_model(
        "SkipSimplifiedLayerNormalization", feeds, ["y", "mean", "inv_std", "sum"], epsilon=1e-5
    )
    _check_against_onnxruntime(model, feeds)


def test_simplified_layer_normalization_is_rms_norm() -> None:
    rng = np.random.default_rng(3)
    feeds = {"x": _normal(rng, 2, 3, 8), "scale": _normal(rng, 8)}
    model = _contrib_model("SimplifiedLayerNormalization", feeds, ["y", "inv_std"], domain="")
    _check_against_onnxruntime(model, feeds)


@pytest.mark.parametrize("with_segments", [False, True])
def test_embed_layer_normalization_matches_onnxruntime(with_segments: bool) -> None:
    rng = np.random.default_rng(4)
    ids = np.array([[1, 2, 3, 0], [4, 5, 0, 0]], dtype="int32")
    feeds: dict[str, np.ndarray] = {"ids": ids}
    if with_segments:
        feeds["seg"] = np.array([[0, 0, 1, 1], [0, 1, 1, 0]], dtype="int32")
    feeds.update(word=_normal(rng, 6, 8), pos=_normal(rng, 4, 8))
    if with_segments:
        feeds["segment"] = _normal(rng, 2, 8)
    feeds.update(gamma=_normal(rng, 8), beta=_normal(rng, 8))
    feeds["mask"] = np.array([[1, 1, 1, 0], [1, 0, 1, 0]], dtype="int32")
    names = ["ids", "seg" if with_segments else "", "word", "pos"]
    names += ["segment" if with_segments else "", "gamma", "beta", "mask"]
    model = _contrib_model(
        "EmbedLayerNormalization", feeds, ["y", "mask_index", "sum"], inputs=names
    )
    _check_against_onnxruntime(model, feeds)


def _attention_feeds(
    rng: np.random.Generator, batch: int, seq: int, hidden: int, units: int
) -> dict[str, np.ndarray]:
    return {
        "x": _normal(rng, batch, seq, hidden),
        "w": (_normal(rng, hidden, units) * 0.3).astype("float32"),
        "b": _normal(rng, units),
    }


@pytest.mark.parametrize(
    ("mask", "unidirectional"),
    [
        (None, 0),
        (None, 1),
        (np.array([3, 2], dtype="int32"), 0),
        (np.array([4, 3, 1, 0], dtype="int32"), 0),
        (np.array([[1, 1, 0, 1], [1, 1, 1, 0]], dtype="int32"), 1),
        (np.tril(np.ones((2, 4, 4), dtype="int32")), 0),
    ],
    ids=["none", "causal", "lengths", "ends_starts", "2d_causal", "3d"],
)
def test_attention_masks_match_onnxruntime(mask: np.ndarray | None, unidirectional: int) -> None:
    rng = np.random.default_rng(5)
    feeds = _attention_feeds(rng, 2, 4, 8, 24)
    names = ["x", "w", "b"]
    if mask is not None:
        feeds["mask"] = mask
        names.append("mask")
    model = _contrib_model(
        "Attention", feeds, ["y"], inputs=names, num_heads=2, unidirectional=unidirectional
    )
    _check_against_onnxruntime(model, feeds)


def test_attention_with_past_present_and_qkv_sizes_matches_onnxruntime() -> None:
    rng = np.random.default_rng(6)
    feeds = _attention_feeds(rng, 2, 3, 8, 24)
    feeds["past"] = _normal(rng, 2, 2, 2, 5, 4)
    model = _contrib_model(
        "Attention",
        feeds,
        ["y", "present"],
        inputs=["x", "w", "b", "", "past"],
        num_heads=2,
        unidirectional=1,
        scale=0.3,
    )
    _check_against_onnxruntime(model, feeds)
    biased = _attention_feeds(rng, 2, 3, 8, 24)
    biased["attention_bias"] = _normal(rng, 1, 2, 3, 3)
    model = _contrib_model(
        "Attention", biased, ["y"], inputs=["x", "w", "b", "", "", "attention_bias"], num_heads=2
    )
    _check_against_onnxruntime(model, biased)
    unequal = _attention_feeds(rng, 1, 3, 8, 20)
    model = _contrib_model("Attention", unequal, ["y"], num_heads=2, qkv_hidden_sizes=[6, 6, 8])
    _check_against_onnxruntime(model, unequal)


def test_attention_refuses_rotary_naming_the_node_and_attribute() -> None:
    feeds = _attention_feeds(np.random.default_rng(7), 1, 2, 8, 24)
    model = _contrib_model("Attention", feeds, ["y"], num_heads=2, do_rotary=1)
    with pytest.raises(OnnxImportError, match=r"Attention.*do_rotary=1 is not supported"):
        relay.frontend.from_onnx(model)


def _pytvm_outputs(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    mod, params = relay.frontend.from_onnx(model)
    got = relay.create_executor("graph", mod).evaluate()(**feeds, **params)
    return [got.numpy()] if not isinstance(got, (list, tuple)) else [g.numpy() for g in got]


@pytest.mark.parametrize("form", ["separate", "past"])
def test_multi_head_attention_matches_onnxruntime(form: str) -> None:
    rng = np.random.default_rng(8)
    b, s, n, h = 2, 3, 2, 4
    q, k, v = _normal(rng, b, s, n * h), _normal(rng, b, 5, n * h), _normal(rng, b, 5, n * h)
    if form == "separate":
        mask = np.array([[1, 1, 1, 0, 1], [1, 1, 1, 1, 0]], dtype="int32")
        feeds = {"q": q, "k": k, "v": v, "bias": _normal(rng, 3 * n * h), "mask": mask}
        names, outs = list(feeds), ["y"]
    else:
        past_k, past_v = _normal(rng, b, n, 2, h), _normal(rng, b, n, 2, h)
        feeds = {"q": q, "k": k[:, :s], "v": v[:, :s], "pk": past_k, "pv": past_v}
        names, outs = ["q", "k", "v", "", "", "", "pk", "pv"], ["y", "present_k", "present_v"]
    model = _contrib_model(
        "MultiHeadAttention",
        feeds,
        outs,
        inputs=names,
        num_heads=n,
        unidirectional=int(form == "past"),
    )
    _check_against_onnxruntime(model, feeds)


def test_multi_head_attention_packed_forms_equal_the_separate_form() -> None:
    # ONNX Runtime's CPU kernel refuses packed Q/K/V: compare with its separate form.
    rng = np.random.default_rng(12)
    b, s, n, h = 2, 3, 2, 4
    qkv = _normal(rng, b, s, n, 3, h)
    q, k, v = (qkv[:, :, :, j].reshape(b, s, n * h) for j in range(3))
    separate = {"q": q, "k": k, "v": v}
    model = _contrib_model("MultiHeadAttention", separate, ["y"], num_heads=n)
    (expected,) = onnxruntime.InferenceSession(model.SerializeToString()).run(None, separate)
    packed = _contrib_model("MultiHeadAttention", {"qkv": qkv}, ["y"], num_heads=n)
    np.testing.assert_allclose(_pytvm_outputs(packed, {"qkv": qkv})[0], expected, atol=1e-5)
    kv = np.stack([k.reshape(b, s, n, h), v.reshape(b, s, n, h)], axis=3)
    packed_kv = _contrib_model("MultiHeadAttention", {"q": q, "kv": kv}, ["y"], num_heads=n)
    got = _pytvm_outputs(packed_kv, {"q": q, "kv": kv})[0]
    np.testing.assert_allclose(got, expected, atol=1e-5)


@pytest.mark.parametrize(("trans_a", "trans_b"), [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_fused_matmul_matches_onnxruntime(trans_a: int, trans_b: int) -> None:
    rng = np.random.default_rng(9)
    a = _normal(rng, 2, 3, 5) if not trans_a else _normal(rng, 2, 5, 3)
    b = _normal(rng, 2, 5, 4) if not trans_b else _normal(rng, 2, 4, 5)
    feeds = {"a": a, "b": b}
    model = _contrib_model("FusedMatMul", feeds, ["y"], transA=trans_a, transB=trans_b, alpha=0.5)
    _check_against_onnxruntime(model, feeds)


def test_quick_gelu_matches_onnxruntime() -> None:
    feeds = {"x": _normal(np.random.default_rng(10), 3, 7)}
    _check_against_onnxruntime(_contrib_model("QuickGelu", feeds, ["y"], alpha=1.5), feeds)


def test_bias_add_and_bias_softmax_match_numpy() -> None:
    rng = np.random.default_rng(11)
    x, bias, skip = _normal(rng, 2, 3, 4), _normal(rng, 4), _normal(rng, 2, 3, 4)
    model = _contrib_model("BiasAdd", {"x": x, "bias": bias, "skip": skip}, ["y"])
    mod, params = relay.frontend.from_onnx(model)
    got = relay.create_executor("graph", mod).evaluate()(x=x, bias=bias, skip=skip, **params)
    np.testing.assert_allclose(got.numpy(), x + bias + skip, rtol=1e-6)
    mask = _normal(rng, 1, 3, 4)
    model = _contrib_model(
        "BiasSoftmax", {"x": x, "mask": mask}, ["y"], axis=1, is_inner_broadcast=0
    )
    mod, params = relay.frontend.from_onnx(model)
    got = relay.create_executor("graph", mod).evaluate()(x=x, mask=mask, **params)
    z = (x + mask).reshape(2, 12)
    e = np.exp(z - z.max(axis=1, keepdims=True))
    np.testing.assert_allclose(
        got.numpy(), (e / e.sum(axis=1, keepdims=True)).reshape(2, 3, 4), rtol=1e-5
    )
