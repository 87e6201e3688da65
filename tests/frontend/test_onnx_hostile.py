"""Hostile ONNX models (a few hundred bytes each) get one clear error naming the node: no
traceback of numpy, no huge allocation (constants are sized before they are made), nothing a
model that breaks ONNX's own rules (types, attribute types, opsets, single assignment) slips by.

Sizes that would be made are far beyond any machine's memory (terabytes), so a check that came
after the allocation fails at once with ``MemoryError`` rather than filling memory.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from pytvm.frontend import from_onnx
from pytvm.frontend.onnx import ConstantSizeError, OnnxImportError
from pytvm.graph import Constant
from pytvm.transform import PassContext

F, I64 = TensorProto.FLOAT, TensorProto.INT64
HUGE = 2**20  # a side of a 2**40-element tensor: 4 TiB of float32


def _model(
    nodes: list[Any],
    inputs: list[tuple[str, int, list[Any]]] | None = None,
    inits: dict[str, Any] | None = None,
    opset: int = 17,
    outputs: tuple[str, ...] = ("y",),
    raw_inits: list[onnx.TensorProto] | None = None,
) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes,
        "hostile",
        [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs or []],
        [helper.make_tensor_value_info(o, F, None) for o in outputs],
        initializer=[numpy_helper.from_array(np.asarray(v), k) for k, v in (inits or {}).items()]
        + list(raw_inits or []),
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def _constant(name: str, value: Any) -> onnx.NodeProto:
    tensor = numpy_helper.from_array(np.asarray(value), f"{name}_value")
    return helper.make_node("Constant", [], [name], value=tensor, name=name)


def _raw_tensor(name: str, dims: list[int], data: bytes) -> onnx.TensorProto:
    """A float tensor whose dims claim more than its data holds (helper.make_tensor refuses)."""
    tensor = onnx.TensorProto(name=name, data_type=F, raw_data=data)
    tensor.dims.extend(dims)
    return tensor


def _ints(*values: int) -> np.ndarray:
    return np.array(values, dtype=np.int64)


# ---------------------------------------------------------------------- constant sizes

_HUGE_CONSTANTS = {
    "ConstantOfShape": _model(
        [helper.make_node("ConstantOfShape", ["s"], ["y"], name="n")],
        inits={"s": _ints(HUGE, HUGE)},
    ),
    "Range": _model(
        [helper.make_node("Range", ["a", "b", "d"], ["y"], name="n")],
        inits={"a": np.int64(0), "b": np.int64(10**13), "d": np.int64(1)},
    ),
    "Expand": _model(
        [_constant("x", np.float32(1)), helper.make_node("Expand", ["x", "s"], ["y"], name="n")],
        inits={"s": _ints(HUGE, HUGE)},
    ),
    "Tile": _model(
        [helper.make_node("Tile", ["x", "r"], ["y"], name="n")],
        inits={"x": _ints(1, 2), "r": _ints(HUGE * HUGE)},
    ),
    "Pad": _model(
        [
            _constant("x", np.ones((2, 2), "float32")),
            helper.make_node("Pad", ["x", "p"], ["y"], name="n"),
        ],
        inits={"p": _ints(0, 0, HUGE, HUGE)},
    ),
    "Resize": _model(
        [
            _constant("x", np.ones((1, 1, 2, 2), "float32")),
            helper.make_node("Resize", ["x", "", "sc"], ["y"], name="n"),
        ],
        inits={"sc": np.array([1, 1, HUGE, HUGE], "float32")},
    ),
    "OneHot": _model(
        [helper.make_node("OneHot", ["i", "d", "v"], ["y"], name="n")],
        [("i", I64, [4])],
        {"d": np.int64(HUGE * HUGE), "v": np.array([0, 1], "float32")},
    ),
    "EyeLike": _model(
        [helper.make_node("EyeLike", ["x"], ["y"], name="n")], [("x", F, [HUGE, HUGE])]
    ),
    "IsInf": _model(
        [helper.make_node("IsInf", ["x"], ["y"], name="n", detect_positive=0, detect_negative=0)],
        [("x", F, [HUGE, HUGE])],
    ),
    "Dropout": _model(
        [helper.make_node("Dropout", ["x"], ["y", "mask"], name="n")],
        [("x", F, [HUGE, HUGE])],
        outputs=("y", "mask"),
    ),
    "Reshape": _model(  # a folded constant reshaped: the size it had is the size it keeps
        [
            helper.make_node("ConstantOfShape", ["s"], ["c"], name="n"),
            helper.make_node("Reshape", ["c", "t"], ["y"], name="r"),
        ],
        inits={"s": _ints(HUGE * HUGE), "t": _ints(HUGE, HUGE)},
    ),
    "Concat": _model(  # doubling a constant that is within the limit, until it is not
        [_constant("c0", np.zeros(2**16, "float32"))]
        + [
            helper.make_node("Concat", [f"c{k}", f"c{k}"], [f"c{k + 1}"], name="n", axis=0)
            for k in range(12)
        ]
        + [helper.make_node("Identity", ["c12"], ["y"], name="out")],
    ),
}


@pytest.mark.parametrize("op", sorted(_HUGE_CONSTANTS))
def test_a_huge_constant_is_refused_before_it_is_made(op: str) -> None:
    with pytest.raises(ConstantSizeError) as info:
        from_onnx(_HUGE_CONSTANTS[op])
    message = str(info.value)
    assert "ONNX node 'n' (" in message
    assert "over the limit of 512 MiB (536870912 bytes)" in message
    assert "max_constant_bytes" in message
    assert info.value.nbytes > info.value.limit == 512 * 2**20


def test_the_constant_error_names_node_shape_size_and_limit() -> None:
    model = _model(
        [helper.make_node("ConstantOfShape", ["s"], ["y"], name="fill")],
        inits={"s": _ints(65536, 65536)},
    )
    with pytest.raises(ConstantSizeError) as info:
        from_onnx(model)
    assert str(info.value).startswith(
        "ONNX node 'fill' (ConstantOfShape, opset 17): the filled tensor would be a constant of "
        "shape [65536, 65536] (float32), 16 GiB (17179869184 bytes), over the limit of 512 MiB "
        "(536870912 bytes) on one constant made at import"
    )


def test_split_into_more_outputs_than_the_node_has_is_refused() -> None:
    node = helper.make_node("Split", ["x"], ["a", "b"], name="sp", axis=0, num_outputs=10**12)
    model = _model([node], [("x", F, [4])], opset=18, outputs=("a",))
    with pytest.raises(OnnxImportError) as info:
        from_onnx(model)
    assert str(info.value) == (
        "ONNX node 'sp' (Split, opset 18): num_outputs=1000000000000, but the node has 2 "
        "outputs; they must agree"
    )


def test_a_shape_whose_product_overflows_int64_is_refused() -> None:
    model = _model(
        [helper.make_node("ConstantOfShape", ["s"], ["y"], name="n")],
        inits={"s": _ints(2**62, 2**62, 4)},
    )
    with pytest.raises(ConstantSizeError, match=r"\[4611686018427387904, 4611686018427387904, 4\]"):
        from_onnx(model)
    expand = _model(
        [helper.make_node("Expand", ["x", "s"], ["y"], name="n")],
        [("x", F, [1])],
        {"s": _ints(2**62, 2**62, 4)},
    )
    with pytest.raises(
        OnnxImportError, match=r"ONNX node 'n' \(Expand.*more than 9223372036854775807"
    ):
        from_onnx(expand)


def test_a_huge_graph_input_shape_is_refused_naming_the_input() -> None:
    model = _model([helper.make_node("Relu", ["x"], ["y"], name="n")], [("x", F, ["n", 4])])
    with pytest.raises(OnnxImportError, match=r"graph input 'x' .*at most 9223372036854775807"):
        from_onnx(model, {"x": (99999999999999999999999, 4)})
    with pytest.raises(OnnxImportError, match=r"graph input 'x' .*dimensions >= 0"):
        from_onnx(model, {"x": (-1, 4)})


def test_the_limit_is_an_argument_or_a_pass_context_option() -> None:
    model = _model(
        [helper.make_node("Range", ["a", "b", "d"], ["y"], name="n")],
        inits={"a": np.int64(0), "b": np.int64(1000), "d": np.int64(1)},
    )
    from_onnx(model)  # 8000 bytes
    with pytest.raises(ConstantSizeError, match=r"over the limit of 1024 bytes"):
        from_onnx(model, max_constant_bytes=1024)
    with PassContext(config={"graph.max_constant_bytes": 1024}):
        with pytest.raises(ConstantSizeError, match=r"over the limit of 1024 bytes"):
            from_onnx(model)
        from_onnx(model, max_constant_bytes=8000)  # the argument wins
    with pytest.raises(TypeError, match="max_constant_bytes"):
        from_onnx(model, max_constant_bytes="1G")  # type: ignore[arg-type]


def test_a_raised_limit_lets_a_large_constant_through() -> None:
    model = _model(
        [helper.make_node("ConstantOfShape", ["s"], ["y"], name="n")],
        inits={"s": _ints(1024, 1024)},
    )
    with pytest.raises(ConstantSizeError):
        from_onnx(model, max_constant_bytes=2**20)
    mod, _ = from_onnx(model, max_constant_bytes=4 * 2**20)
    assert str(mod["main"].checked_type) == "Tensor[(1024, 1024), float32]"


def test_dims_that_disagree_with_the_data_are_refused() -> None:
    init = _model(
        [helper.make_node("Relu", ["w"], ["y"], name="n")],
        raw_inits=[_raw_tensor("w", [65536, 65536], b"\0" * 16)],
    )
    with pytest.raises(OnnxImportError, match=r"initializer 'w' .*declares dims \[65536, 65536\]"):
        from_onnx(init)
    value = _raw_tensor("v", [65536, 65536], b"\0" * 16)
    node = helper.make_node("Constant", [], ["y"], name="k", value=value)
    with pytest.raises(
        OnnxImportError, match=r"ONNX node 'k' \(Constant.*attribute 'value' .*declares dims"
    ):
        from_onnx(_model([node]))


# ---------------------------------------------------------------------- Range


def _range(start: Any, limit: Any, delta: Any) -> onnx.ModelProto:
    return _model(
        [helper.make_node("Range", ["a", "b", "d"], ["y"], name="rng")],
        inits={"a": start, "b": limit, "d": delta},
    )


def test_range_with_delta_zero_is_refused_naming_the_node() -> None:
    with pytest.raises(OnnxImportError, match=r"ONNX node 'rng' \(Range, opset 17\): delta is 0"):
        from_onnx(_range(np.int64(0), np.int64(10), np.int64(0)))
    with pytest.raises(OnnxImportError, match=r"ONNX node 'rng' .*delta is 0"):
        from_onnx(_range(np.float32(0), np.float32(1), np.float32(0)))


def test_range_with_a_vanishing_or_infinite_step_is_refused() -> None:
    with pytest.raises(ConstantSizeError):
        from_onnx(_range(np.float32(0), np.float32(1), np.float32(1e-45)))
    with pytest.raises(OnnxImportError, match="finite"):
        from_onnx(_range(np.float32(0), np.float32(np.inf), np.float32(1)))


def test_range_counts_exactly_for_large_integers() -> None:
    mod, _ = from_onnx(_range(np.int64(2**53), np.int64(2**53 + 3), np.int64(1)))
    assert str(mod["main"].checked_type) == "Tensor[(3), int64]"
    mod, _ = from_onnx(_range(np.int64(10), np.int64(0), np.int64(-3)))
    body = mod["main"].body
    assert isinstance(body, Constant) and body.data.tolist() == [10, 7, 4, 1]


# ---------------------------------------------------------------------- ONNX's own rules

_MIXED_TYPES: dict[str, tuple[list[onnx.NodeProto], dict[str, Any]]] = {
    "Add": ([helper.make_node("Add", ["x", "k"], ["y"], name="n")], {"k": _ints(1, 2)}),
    "Where": (
        [helper.make_node("Where", ["c", "x", "k"], ["y"], name="n")],
        {"c": np.array([True, False]), "k": _ints(1, 2)},
    ),
    "Concat": (
        [helper.make_node("Concat", ["x", "k"], ["y"], name="n", axis=0)],
        {"k": _ints(1, 2)},
    ),
    "Sum": ([helper.make_node("Sum", ["x", "x", "k"], ["y"], name="n")], {"k": _ints(1, 2)}),
    "Max": ([helper.make_node("Max", ["x", "k"], ["y"], name="n")], {"k": _ints(1, 2)}),
    "Mean": ([helper.make_node("Mean", ["x", "k"], ["y"], name="n")], {"k": _ints(1, 2)}),
    "MatMul": ([helper.make_node("MatMul", ["x", "k"], ["y"], name="n")], {"k": _ints(1, 2)}),
    "Gemm": (
        [
            helper.make_node("Unsqueeze", ["x", "ax"], ["x2"], name="u"),
            helper.make_node("Gemm", ["x2", "k"], ["y"], name="n"),
        ],
        {"ax": _ints(0), "k": np.ones((2, 2), "float64")},
    ),
    "Equal": ([helper.make_node("Equal", ["x", "k"], ["y"], name="n")], {"k": _ints(1, 2)}),
    "Clip": (
        [helper.make_node("Clip", ["x", "lo"], ["y"], name="n")],
        {"lo": np.int64(0)},
    ),
}


@pytest.mark.parametrize("op", sorted(_MIXED_TYPES))
def test_inputs_sharing_a_type_parameter_must_share_the_type(op: str) -> None:
    nodes, inits = _MIXED_TYPES[op]
    model = _model(nodes, [("x", F, [2])], inits)
    with pytest.raises(OnnxImportError) as info:
        from_onnx(model)
    message = str(info.value)
    assert message.startswith(f"ONNX node 'n' ({op}, opset 17): inputs ")
    assert "float32" in message and ("int64" in message or "float64" in message)
    assert "type parameter T" in message


def test_the_add_type_error_reads_clearly() -> None:
    model = _model(
        [helper.make_node("Add", ["x", "k"], ["y"], name="add")],
        [("x", F, [2])],
        {"k": _ints(1, 2)},
    )
    with pytest.raises(OnnxImportError) as info:
        from_onnx(model)
    assert str(info.value) == (
        "ONNX node 'add' (Add, opset 17): inputs 'x' (float32) and 'k' (int64) must have the "
        "same element type (they share the type parameter T of Add); make them match, e.g. "
        "with a Cast node"
    )


def test_inputs_of_different_type_parameters_may_differ() -> None:
    model = _model(
        [helper.make_node("Pow", ["x", "e"], ["y"], name="n")], [("x", F, [2])], {"e": np.int64(2)}
    )
    from_onnx(model)


def test_a_float_attribute_where_ints_are_declared_is_refused() -> None:
    node = helper.make_node("Transpose", ["x"], ["y"], name="tr", perm=[1.5, 0.5])
    with pytest.raises(OnnxImportError) as info:
        from_onnx(_model([node], [("x", F, [2, 3])]))
    assert str(info.value).startswith(
        "ONNX node 'tr' (Transpose, opset 17): attribute 'perm' is of type FLOATS ([1.5, 0.5]), "
        "but Transpose's schema declares INTS"
    )


def test_an_int_attribute_where_a_float_is_declared_is_taken() -> None:
    node = helper.make_node("LeakyRelu", ["x"], ["y"], name="n", alpha=1)
    from_onnx(_model([node], [("x", F, [2])]))


def test_a_string_attribute_where_an_int_is_declared_is_refused() -> None:
    node = helper.make_node("Softmax", ["x"], ["y"], name="sm", axis="1")
    with pytest.raises(OnnxImportError, match=r"'axis' is of type STRING .*declares INT"):
        from_onnx(_model([node], [("x", F, [2, 3])]))


def test_an_opset_onnx_does_not_know_is_refused() -> None:
    relu = [helper.make_node("Relu", ["x"], ["y"], name="n")]
    with pytest.raises(OnnxImportError) as info:
        from_onnx(_model(relu, [("x", F, [2])], opset=99))
    newest = onnx.defs.onnx_opset_version()
    assert str(info.value).startswith(
        f"the model gives ONNX opset 99 (default domain), which the installed onnx "
        f"{onnx.__version__} does not know: it knows opsets 1 to {newest}. The importer reads "
        f"opsets 6 to {newest}"
    )
    with pytest.raises(OnnxImportError, match=r"from_onnx\(opset=...\) gives ONNX opset 0"):
        from_onnx(_model(relu, [("x", F, [2])]), opset=0)


def test_an_operator_definition_older_than_opset_6_is_refused() -> None:
    relu = [helper.make_node("Relu", ["x"], ["y"], name="r")]
    with pytest.raises(OnnxImportError) as info:
        from_onnx(_model(relu, [("x", F, [2])], opset=1))
    assert str(info.value).startswith(
        "ONNX node 'r' (Relu, opset 1): the model uses Relu-1, the definition of Relu at "
        "opset 1, and the importer reads the definitions from opset 6 on (Relu-6 and later)"
    )


def test_an_old_model_whose_operators_did_not_change_imports() -> None:
    not_ = [helper.make_node("Not", ["x"], ["y"], name="n")]
    from_onnx(_model(not_, [("x", TensorProto.BOOL, [2])], opset=1))  # ONNX's own test_not_2d


def test_two_nodes_writing_one_value_are_refused_naming_both() -> None:
    nodes = [
        helper.make_node("Relu", ["x"], ["y"], name="first"),
        helper.make_node("Neg", ["x"], ["y"], name="second"),
    ]
    with pytest.raises(OnnxImportError) as info:
        from_onnx(_model(nodes, [("x", F, [2])]))
    assert str(info.value) == (
        "ONNX nodes 'first' (Relu) and 'second' (Neg) both write 'y'; an ONNX graph writes each "
        "value once (single static assignment): rename one output"
    )


@pytest.mark.parametrize("written", ["x", "w"])
def test_a_node_writing_a_graph_input_or_initializer_is_refused(written: str) -> None:
    nodes = [
        helper.make_node("Relu", ["x"], [written], name="r"),
        helper.make_node("Add", ["x", "w"], ["y"], name="a"),
    ]
    model = _model(nodes, [("x", F, [2])], {"w": np.ones(2, "float32")})
    kind = "a graph input" if written == "x" else "an initializer"
    with pytest.raises(
        OnnxImportError, match=rf"ONNX node 'r' \(Relu\) writes '{written}', which is {kind}"
    ):
        from_onnx(model)


def test_an_input_nothing_writes_is_refused_naming_the_node() -> None:
    model = _model([helper.make_node("Relu", ["z"], ["y"], name="r")], [("x", F, [2])])
    with pytest.raises(OnnxImportError, match=r"ONNX node 'r' reads 'z', which no earlier node"):
        from_onnx(model)


def _external(tmp_path: Path, location: str) -> onnx.ModelProto:
    tensor = onnx.TensorProto(name="w", data_type=F, data_location=TensorProto.EXTERNAL)
    tensor.dims.extend([4])
    entry = tensor.external_data.add()
    entry.key, entry.value = "location", location
    model = _model([helper.make_node("Relu", ["w"], ["y"], name="r")], raw_inits=[tensor])
    onnx.save(model, tmp_path / "ext.onnx")
    return model


def test_external_data_outside_the_model_directory_is_refused(tmp_path: Path) -> None:
    _external(tmp_path, "../../../../etc/passwd")
    with pytest.raises(OnnxImportError, match=r"'.*ext.onnx': the external data .*points outside"):
        from_onnx(tmp_path / "ext.onnx")


def test_external_data_of_a_model_in_memory_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "w.bin").write_bytes(np.ones(4, "float32").tobytes())
    model = _external(tmp_path, "w.bin")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(OnnxImportError, match=r"initializer 'w' keeps its data in the external"):
        from_onnx(model)
    _, params = from_onnx(tmp_path / "ext.onnx")  # from its path: read beside the file
    assert params["w"].tolist() == [1, 1, 1, 1]
