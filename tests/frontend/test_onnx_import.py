"""The ONNX importer: operators whose attributes became inputs across opsets 9-21 match ONNX
Runtime at each opset; shape arithmetic folds to static shapes; bad models fail with errors that
name the node, the input or the file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

from pytvm.frontend import from_onnx
from pytvm.frontend.onnx import OnnxImportError, UnsupportedOperatorsError
from pytvm.graph import Call, TensorType
from pytvm.graph.functor import post_order
from pytvm.graph.interpreter import interpret

RNG = np.random.default_rng(0)
F = TensorProto.FLOAT


def _model(
    nodes: list[Any],
    inputs: dict[str, tuple[int, list[Any]]],
    outputs: list[str],
    opset: int,
    inits: dict[str, np.ndarray] | None = None,
    out_type: int = F,
) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info(n, t, s) for n, (t, s) in inputs.items()],
        [helper.make_tensor_value_info(o, out_type, None) for o in outputs],
        initializer=[numpy_helper.from_array(v, k) for k, v in (inits or {}).items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8 if opset <= 17 else 10
    return model


def _matches_onnxruntime(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> Any:
    mod, params = from_onnx(model)
    got = interpret(mod["main"], {**feeds, **params})
    got = list(got) if isinstance(got, tuple) else [got]
    sess = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    want = sess.run(None, feeds)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
    return mod


X46 = RNG.standard_normal((4, 6)).astype("float32")
X234 = RNG.standard_normal((2, 3, 4)).astype("float32")


@pytest.mark.parametrize("opset", [11, 13, 18])
def test_split_sizes_as_attribute_then_input(opset: int) -> None:
    inits = {}
    if opset < 13:
        node = helper.make_node("Split", ["x"], ["a", "b"], axis=1, split=[2, 4])
    else:
        node = helper.make_node("Split", ["x", "s"], ["a", "b"], axis=1)
        inits["s"] = np.array([2, 4], "int64")
    _matches_onnxruntime(_model([node], {"x": (F, [4, 6])}, ["a", "b"], opset, inits), {"x": X46})


def test_split_into_uneven_outputs_at_opset_18() -> None:
    node = helper.make_node("Split", ["x"], ["a", "b", "c"], axis=0, num_outputs=3)
    x = RNG.standard_normal((7, 2)).astype("float32")
    _matches_onnxruntime(_model([node], {"x": (F, [7, 2])}, ["a", "b", "c"], 18), {"x": x})


@pytest.mark.parametrize("opset", [11, 13])
def test_squeeze_and_unsqueeze_axes_as_attribute_then_input(opset: int) -> None:
    inits = {}
    if opset < 13:
        nodes = [
            helper.make_node("Unsqueeze", ["x"], ["u"], axes=[0, -1]),
            helper.make_node("Squeeze", ["u"], ["y"], axes=[0]),
        ]
    else:
        nodes = [
            helper.make_node("Unsqueeze", ["x", "ua"], ["u"]),
            helper.make_node("Squeeze", ["u", "sa"], ["y"]),
        ]
        inits = {"ua": np.array([0, -1], "int64"), "sa": np.array([0], "int64")}
    model = _model(nodes, {"x": (F, [2, 3, 4])}, ["y"], opset, inits)
    _matches_onnxruntime(model, {"x": X234})


@pytest.mark.parametrize("opset", [11, 13])
@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
def test_softmax_axis_semantics_change_at_opset_13(op: str, opset: int) -> None:
    # Before 13 the input is coerced to 2-d at `axis` ([2, 12] here); from 13 on, one axis.
    node = helper.make_node(op, ["x"], ["y"], axis=1)
    _matches_onnxruntime(_model([node], {"x": (F, [2, 3, 4])}, ["y"], opset), {"x": X234})


@pytest.mark.parametrize(
    ("op", "opset"),
    [("ReduceSum", 11), ("ReduceSum", 13), ("ReduceMean", 13), ("ReduceMean", 18),
     ("ReduceMax", 18), ("ReduceL2", 13), ("ReduceLogSumExp", 18)],
)  # fmt: skip
def test_reduction_axes_as_attribute_then_input(op: str, opset: int) -> None:
    axes_input = opset >= (13 if op == "ReduceSum" else 18)
    if axes_input:
        node = helper.make_node(op, ["x", "axes"], ["y"], keepdims=0)
        inits = {"axes": np.array([-1, 0], "int64")}
    else:
        node = helper.make_node(op, ["x"], ["y"], axes=[-1, 0], keepdims=0)
        inits = {}
    model = _model([node], {"x": (F, [2, 3, 4])}, ["y"], opset, inits)
    _matches_onnxruntime(model, {"x": X234})


def test_reduce_with_no_axes_is_the_identity_when_asked() -> None:
    node = helper.make_node("ReduceSum", ["x"], ["y"], noop_with_empty_axes=1)
    model = _model([node], {"x": (F, [2, 3, 4])}, ["y"], 13)
    mod = _matches_onnxruntime(model, {"x": X234})
    assert not any(isinstance(n, Call) for n in post_order(mod["main"].body))


@pytest.mark.parametrize("opset", [9, 11, 13])
def test_clip_bounds_as_attributes_then_inputs(opset: int) -> None:
    if opset < 11:
        node = helper.make_node("Clip", ["x"], ["y"], min=-0.5, max=0.25)
        inits = {}
    else:
        node = helper.make_node("Clip", ["x", "lo", "hi"], ["y"])
        inits = {"lo": np.array(-0.5, "float32"), "hi": np.array(0.25, "float32")}
    _matches_onnxruntime(_model([node], {"x": (F, [4, 6])}, ["y"], opset, inits), {"x": X46})


def test_clip_with_only_a_lower_bound_and_integers() -> None:
    node = helper.make_node("Clip", ["x", "lo"], ["y"])
    x = np.arange(-5, 7, dtype="int32").reshape(3, 4)
    model = _model(
        [node], {"x": (TensorProto.INT32, [3, 4])}, ["y"], 13, {"lo": np.array(-2, "int32")},
        out_type=TensorProto.INT32,
    )  # fmt: skip
    _matches_onnxruntime(model, {"x": x})


@pytest.mark.parametrize("opset", [9, 11, 18])
@pytest.mark.parametrize("mode", ["constant", "reflect", "edge"])
def test_pad_as_attribute_then_input(opset: int, mode: str) -> None:
    inits: dict[str, np.ndarray] = {}
    if opset < 11:
        node = helper.make_node("Pad", ["x"], ["y"], mode=mode, pads=[0, 1, 2, 0, 2, 1], value=1.5)
    elif opset < 18:
        node = helper.make_node("Pad", ["x", "p", "v"], ["y"], mode=mode)
        inits = {"p": np.array([0, 1, 2, 0, 2, 1], "int64"), "v": np.array(1.5, "float32")}
    else:
        node = helper.make_node("Pad", ["x", "p", "v", "a"], ["y"], mode=mode)
        inits = {
            "p": np.array([2, 1, 1, -1], "int64"),
            "v": np.array(1.5, "float32"),
            "a": np.array([2, -2], "int64"),
        }
    model = _model([node], {"x": (F, [2, 3, 4])}, ["y"], opset, inits)
    _matches_onnxruntime(model, {"x": X234})


@pytest.mark.parametrize("opset", [9, 10, 13])
def test_slice_bounds_as_attributes_then_inputs(opset: int) -> None:
    if opset < 10:
        node = helper.make_node("Slice", ["x"], ["y"], starts=[1, -3], ends=[100, -1], axes=[0, 1])
        inits = {}
    else:
        node = helper.make_node("Slice", ["x", "s", "e", "a", "t"], ["y"])
        big = np.iinfo(np.int64).min
        inits = {
            "s": np.array([-1, 4], "int64"),
            "e": np.array([big, 0], "int64"),
            "a": np.array([0, -1], "int64"),
            "t": np.array([-2, -3], "int64"),
        }
    _matches_onnxruntime(_model([node], {"x": (F, [4, 6])}, ["y"], opset, inits), {"x": X46})


IMG = RNG.standard_normal((1, 2, 4, 6)).astype("float32")


@pytest.mark.parametrize(
    ("op", "opset", "mode", "scales"),
    [("Upsample", 9, "nearest", [1, 1, 2, 3]), ("Upsample", 9, "linear", [1, 1, 2, 1.5]),
     ("Resize", 10, "nearest", [1, 1, 0.5, 0.5]), ("Resize", 10, "linear", [1, 1, 2, 2]),
     ("Resize", 13, "nearest", [1, 1, 1.5, 0.75]), ("Resize", 19, "linear", [1, 1, 0.6, 1.7])],
)  # fmt: skip
def test_upsample_and_resize_across_opsets(
    op: str, opset: int, mode: str, scales: list[float]
) -> None:
    inits = {"scales": np.array(scales, "float32")}
    inputs = ["x", "scales"] if op == "Upsample" or opset == 10 else ["x", "", "scales"]
    node = helper.make_node(op, inputs, ["y"], mode=mode)
    model = _model([node], {"x": (F, [1, 2, 4, 6])}, ["y"], opset, inits)
    _matches_onnxruntime(model, {"x": IMG})


def test_resize_to_sizes_keeping_the_aspect_ratio() -> None:
    node = helper.make_node(
        "Resize", ["x", "", "", "sizes"], ["y"], mode="linear", axes=[2, 3],
        keep_aspect_ratio_policy="not_larger",
    )  # fmt: skip
    model = _model(
        [node], {"x": (F, [1, 2, 4, 6])}, ["y"], 18, {"sizes": np.array([7, 7], "int64")}
    )
    _matches_onnxruntime(model, {"x": IMG})


def test_resize_refuses_antialias_naming_the_node() -> None:
    node = helper.make_node("Resize", ["x", "", "s"], ["y"], mode="linear", antialias=1, name="up1")
    model = _model(
        [node], {"x": (F, [1, 2, 4, 6])}, ["y"], 18, {"s": np.array([1, 1, 2, 2], "float32")}
    )
    with pytest.raises(OnnxImportError, match=r"'up1' \(Resize, opset 18\): antialias"):
        from_onnx(model)


def test_shape_arithmetic_folds_to_a_static_reshape() -> None:
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Gather", ["shape", "zero"], ["batch"], axis=0),
        helper.make_node("Unsqueeze", ["batch", "zero"], ["batch1"]),
        helper.make_node("Concat", ["batch1", "minus_one"], ["target"], axis=0),
        helper.make_node("Cast", ["target"], ["target_f"], to=TensorProto.FLOAT),
        helper.make_node("Cast", ["target_f"], ["target_i"], to=TensorProto.INT64),
        helper.make_node("Reshape", ["x", "target_i"], ["y"]),
    ]
    inits = {"zero": np.array(0, "int64"), "minus_one": np.array([-1], "int64")}
    model = _model(nodes, {"x": (F, [2, 3, 4])}, ["y"], 13, inits)
    mod = _matches_onnxruntime(model, {"x": X234})
    calls = [n for n in post_order(mod["main"].body) if isinstance(n, Call)]
    assert [(c.op, c.attrs["newshape"]) for c in calls] == [("reshape", (2, 12))]


def test_constant_of_shape_range_and_expand_fold() -> None:
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node(
            "ConstantOfShape", ["s"], ["ones"],
            value=numpy_helper.from_array(np.array([1.0], "float32")),
        ),
        helper.make_node("Range", ["start", "limit", "delta"], ["r"]),
        helper.make_node("Cast", ["r"], ["rf"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["ones", "rf"], ["scale"]),
        helper.make_node("Mul", ["x", "scale"], ["y"]),
    ]  # fmt: skip
    inits = {
        "start": np.array(1, "int64"),
        "limit": np.array(9, "int64"),
        "delta": np.array(2, "int64"),
    }
    mod = _matches_onnxruntime(_model(nodes, {"x": (F, [2, 3, 4])}, ["y"], 13, inits), {"x": X234})
    calls = [n for n in post_order(mod["main"].body) if isinstance(n, Call)]
    assert [c.op for c in calls] == ["multiply"]


@pytest.mark.parametrize(
    ("equation", "shapes"),
    [("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("ij->ji", [(3, 4)]), ("ij->", [(3, 4)]),
     ("...ij,jk->...ik", [(2, 2, 3, 4), (4, 5)]), ("i,j->ij", [(3,), (4,)]),
     ("bhqd,bhkd->bhqk", [(1, 2, 3, 4), (1, 2, 5, 4)]), ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
     ("bij,bkj", [(2, 3, 4), (1, 5, 4)])],
)  # fmt: skip
def test_einsum_matmul_forms(equation: str, shapes: list[tuple[int, ...]]) -> None:
    names = [f"x{i}" for i in range(len(shapes))]
    node = helper.make_node("Einsum", names, ["y"], equation=equation)
    model = _model([node], {n: (F, list(s)) for n, s in zip(names, shapes, strict=True)}, ["y"], 12)
    feeds = {
        n: RNG.standard_normal(s).astype("float32") for n, s in zip(names, shapes, strict=True)
    }
    _matches_onnxruntime(model, feeds)


def test_einsum_refuses_a_diagonal() -> None:
    node = helper.make_node("Einsum", ["x"], ["y"], equation="ii->i", name="diag")
    with pytest.raises(OnnxImportError, match=r"'diag'.*diagonal"):
        from_onnx(_model([node], {"x": (F, [3, 3])}, ["y"], 12))


@pytest.mark.parametrize(
    ("sa", "sb"),
    [((2, 1, 3, 4), (5, 4, 6)), ((4,), (4, 6)), ((2, 3, 4), (4,)), ((3, 4), (2, 4, 5)),
     ((2, 3, 4), (4, 5))],
)  # fmt: skip
def test_matmul_broadcasts_batches_and_vectors(sa: tuple[int, ...], sb: tuple[int, ...]) -> None:
    node = helper.make_node("MatMul", ["a", "b"], ["y"])
    model = _model([node], {"a": (F, list(sa)), "b": (F, list(sb))}, ["y"], 13)
    feeds = {
        "a": RNG.standard_normal(sa).astype("float32"),
        "b": RNG.standard_normal(sb).astype("float32"),
    }
    _matches_onnxruntime(model, feeds)


@pytest.mark.parametrize("c_shape", [(), (5,), (3, 1), (3, 5)])
def test_gemm_with_alpha_beta_transposes_and_broadcast_c(c_shape: tuple[int, ...]) -> None:
    node = helper.make_node("Gemm", ["a", "b", "c"], ["y"], alpha=0.5, beta=2.0, transA=1, transB=1)
    inits = {
        "b": RNG.standard_normal((5, 4)).astype("float32"),
        "c": RNG.standard_normal(c_shape).astype("float32"),
    }
    model = _model([node], {"a": (F, [4, 3])}, ["y"], 13, inits)
    _matches_onnxruntime(model, {"a": RNG.standard_normal((4, 3)).astype("float32")})


@pytest.mark.parametrize(
    "attrs",
    [
        {"output_shape": [9, 11]},
        {"auto_pad": "SAME_UPPER"},
        {"output_padding": [1, 0], "pads": [1, 0, 0, 1]},
    ],
)
def test_conv_transpose_output_shape_and_padding(attrs: dict[str, Any]) -> None:
    w = RNG.standard_normal((2, 3, 3, 3)).astype("float32")
    node = helper.make_node("ConvTranspose", ["x", "w", "b"], ["y"], strides=[2, 2], **attrs)
    inits = {"w": w, "b": RNG.standard_normal(3).astype("float32")}
    model = _model([node], {"x": (F, [1, 2, 4, 5])}, ["y"], 13, inits)
    _matches_onnxruntime(model, {"x": RNG.standard_normal((1, 2, 4, 5)).astype("float32")})


@pytest.mark.parametrize("auto_pad", ["SAME_UPPER", "SAME_LOWER", "VALID"])
def test_one_dimensional_conv_and_pools_with_auto_pad(auto_pad: str) -> None:
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], strides=[2], auto_pad=auto_pad),
        helper.make_node("MaxPool", ["c"], ["m"], kernel_shape=[2], auto_pad=auto_pad),
        helper.make_node("AveragePool", ["m"], ["y"], kernel_shape=[3], auto_pad=auto_pad),
    ]
    inits = {"w": RNG.standard_normal((4, 2, 3)).astype("float32")}
    model = _model(nodes, {"x": (F, [1, 2, 17])}, ["y"], 13, inits)
    _matches_onnxruntime(model, {"x": RNG.standard_normal((1, 2, 17)).astype("float32")})


def test_model_local_functions_are_inlined() -> None:
    body = [
        helper.make_node("Mul", ["a", "a"], ["sq"]),
        helper.make_node("Add", ["sq", "a"], ["out"]),
    ]
    square_plus = helper.make_function(
        "local", "SquarePlus", ["a"], ["out"], body, [helper.make_opsetid("", 13)]
    )
    node = helper.make_node("SquarePlus", ["x"], ["y"], domain="local")
    model = _model([node], {"x": (F, [4, 6])}, ["y"], 13)
    model.opset_import.append(helper.make_opsetid("local", 1))
    model.functions.append(square_plus)
    _matches_onnxruntime(model, {"x": X46})


def test_several_outputs_become_a_tuple() -> None:
    nodes = [helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Neg", ["x"], ["b"])]
    mod = _matches_onnxruntime(_model(nodes, {"x": (F, [4, 6])}, ["a", "b"], 13), {"x": X46})
    assert len(mod["main"].checked_type.fields) == 2


def test_unsupported_operators_are_listed_in_one_error() -> None:
    nodes = [
        helper.make_node("Unique", ["x"], ["v"], name="top"),
        helper.make_node("Relu", ["v"], ["r"], name="relu"),
        helper.make_node("Det", ["r"], ["nz1"], name="nz_a"),
        helper.make_node("Det", ["x"], ["nz2"], name="nz_b"),
    ]
    model = _model(nodes, {"x": (F, [4, 6])}, ["nz1", "nz2"], 13, {"k": np.array([2], "int64")})
    with pytest.raises(UnsupportedOperatorsError) as info:
        from_onnx(model)
    assert info.value.unsupported == [
        ("Unique", "top", 13),
        ("Det", "nz_a", 13),
        ("Det", "nz_b", 13),
    ]
    message = str(info.value)
    for name in ("'top'", "'nz_a'", "'nz_b'", "Det, Unique", "opset 13"):
        assert name in message
    assert isinstance(info.value, OnnxImportError)  # a TVMValueError


def test_an_operator_newer_than_the_opset_is_unsupported() -> None:
    node = helper.make_node("LayerNormalization", ["x", "g"], ["y"], name="ln")
    model = _model([node], {"x": (F, [4, 6])}, ["y"], 13, {"g": np.ones(6, "float32")})
    with pytest.raises(
        UnsupportedOperatorsError, match=r"LayerNormalization \(node 'ln', opset 13\)"
    ):
        from_onnx(model)


def test_a_file_that_does_not_parse_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x08\x07this is not an ONNX model\xff\xfe")
    with pytest.raises(OnnxImportError, match=r"bad\.onnx"):
        from_onnx(bad)
    with pytest.raises(OnnxImportError, match="no ONNX file"):
        from_onnx(tmp_path / "missing.onnx")


def test_dynamic_dims_need_shape_dict() -> None:
    node = helper.make_node("Relu", ["x"], ["y"])
    model = _model([node], {"x": (F, ["batch", 6])}, ["y"], 13)
    dynamic, _ = from_onnx(model)  # imported per the shapes of each call (test_onnx_value_inputs)
    with pytest.raises(OnnxImportError, match=r"\['x'\] have dimensions known only .*shape_dict"):
        dynamic.astext()
    mod, _ = from_onnx(model, shape_dict={"x": (3, 6)})
    assert mod["main"].params[0].type_annotation == TensorType((3, 6), "float32")
    mod, _ = from_onnx(model, shape={"x": (2, 6)})  # TVM's keyword
    assert mod["main"].params[0].type_annotation == TensorType((2, 6), "float32")


def test_a_shape_computed_from_an_input_value_names_that_input() -> None:
    node = helper.make_node("Reshape", ["x", "target"], ["y"], name="rs")
    model = _model([node], {"x": (F, [4, 6]), "target": (TensorProto.INT64, [2])}, ["y"], 13)
    mod, _ = from_onnx(model)  # imported per value at run (test_onnx_value_inputs.py)
    with pytest.raises(OnnxImportError, match=r"\['target'\].*'rs' \(Reshape"):
        mod.astext()


def test_from_onnx_is_reachable_as_tvm_names_it() -> None:
    import pytvm

    assert pytvm.frontend.from_onnx is from_onnx


def test_the_model_is_not_modified() -> None:
    nodes = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Neg", ["r"], ["y"])]
    model = _model(nodes, {"x": (F, [4, 6])}, ["y"], 13)
    before = model.SerializeToString()
    mod, _ = from_onnx(model)
    assert model.SerializeToString() == before
    assert "/* Relu_0 */" in str(mod) and "/* Neg_1 */" in str(mod)


def test_a_bad_node_is_named_in_the_error() -> None:
    node = helper.make_node("Add", ["x", "z"], ["y"], name="bad_add")
    model = _model([node], {"x": (F, [4, 6]), "z": (F, [5])}, ["y"], 13)
    with pytest.raises(OnnxImportError, match=r"'bad_add' \(Add, opset 13\)"):
        from_onnx(model)
