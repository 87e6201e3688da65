"""TVM v0.18's AOT test utilities (``tvm.testing.aot``, ``tvm.micro.testing``): Relay models
built with the AOT executor, run as C programs on this machine and checked against the graph
executor's outputs.
"""

from __future__ import annotations

import numpy as np
import pytest

from pytvm import relay
from pytvm.ffi.errors import TVMValueError
from pytvm.micro.testing import (
    AOT_CORSTONE300_RUNNER,
    AOT_DEFAULT_RUNNER,
    get_conv2d_relay_module,
    parametrize_aot_options,
)
from pytvm.testing import requires_package
from pytvm.testing.aot import AOTTestModel, compile_and_run, compile_models, generate_ref_data


def _add_mul() -> tuple[relay.IRModule, dict[str, np.ndarray]]:
    x = relay.var("x", shape=(2, 3), dtype="float32")
    y = relay.var("y", shape=(2, 3), dtype="float32")
    body = relay.multiply(relay.add(x, y), relay.const(np.full((2, 3), 0.5, "float32")))
    rng = np.random.default_rng(0)
    data = {n: rng.random((2, 3), dtype=np.float32) for n in ("x", "y")}
    return relay.IRModule.from_expr(relay.Function([x, y], body)), data


def test_parametrize_aot_options_grid() -> None:
    @parametrize_aot_options
    def probe(interface_api: str, use_unpacked_api: bool, test_runner: object) -> None: ...

    (mark,) = probe.pytestmark  # type: ignore[attr-defined]
    cases = {p.id: p for p in mark.args[1]}
    assert sorted(cases) == sorted(
        f"{api}-{kind}-{runner}"
        for api, kind in (("packed", "unpacked"), ("packed", "packed"), ("c", "unpacked"))
        for runner in ("default", "corstone300")
    )
    assert not cases["c-unpacked-default"].marks
    assert any(m.name == "skipif" for m in cases["c-unpacked-corstone300"].marks)


@pytest.mark.parametrize(
    ("interface_api", "use_unpacked_api"), [("packed", True), ("packed", False), ("c", True)]
)
def test_compile_and_run(interface_api: str, use_unpacked_api: bool) -> None:
    mod, data = _add_mul()
    ref = generate_ref_data(mod, data)
    np.testing.assert_allclose(ref["output"], (data["x"] + data["y"]) * 0.5, rtol=1e-6)
    model = AOTTestModel(module=mod, inputs=data, outputs=ref)
    assert compile_and_run(model, AOT_DEFAULT_RUNNER, interface_api, use_unpacked_api)


def test_int8_conv2d_and_a_float_model_in_one_program() -> None:
    conv = get_conv2d_relay_module()
    rng = np.random.default_rng(1)
    conv_in = {
        "data": rng.integers(-8, 8, (1, 3, 24, 24), dtype=np.int8),
        "weight": rng.integers(-8, 8, (8, 3, 3, 3), dtype=np.int8),
    }
    conv_ref = generate_ref_data(conv, conv_in)
    assert conv_ref["output"].dtype == np.int32 and conv_ref["output"].shape == (1, 8, 24, 24)
    mod, data = _add_mul()
    models = [
        AOTTestModel(module=conv, inputs=conv_in, outputs=conv_ref, name="conv"),
        AOTTestModel(module=mod, inputs=data, outputs=generate_ref_data(mod, data), name="fp"),
    ]
    assert compile_and_run(models, AOT_DEFAULT_RUNNER, "c", True)
    factories = compile_models(models, "c", True)
    assert [f.executor_factory.mod_name for f in factories] == ["conv", "fp"]


def test_mismatch_names_the_element_and_the_share() -> None:
    mod, data = _add_mul()
    wrong = generate_ref_data(mod, data)["output"].copy()
    wrong[1, 2] += 1.0
    model = AOTTestModel(module=mod, inputs=data, outputs={"output": wrong})
    with pytest.raises(RuntimeError, match=r"Element \[1, 2\]:(.|\n)*Mismatched elements: 1 / 6"):
        compile_and_run(model, AOT_DEFAULT_RUNNER, "c", True, print_output_on_mismatch=True)
    # within the tolerance the same outputs pass
    close = AOTTestModel(module=mod, inputs=data, outputs={"output": wrong}, output_tolerance=1.5)
    assert compile_and_run(close, AOT_DEFAULT_RUNNER, "c", True)


def test_tuple_outputs_are_named_output0_output1() -> None:
    x = relay.var("x", shape=(4,), dtype="float32")
    mod = relay.IRModule.from_expr(relay.Function([x], relay.Tuple([relay.add(x, x), x])))
    data = {"x": np.arange(4, dtype="float32")}
    ref = generate_ref_data(mod, data)
    assert sorted(ref) == ["output0", "output1"]
    assert compile_and_run(AOTTestModel(module=mod, inputs=data, outputs=ref),
                           AOT_DEFAULT_RUNNER, "packed", True)  # fmt: skip


def test_bad_inputs_and_runners_are_named() -> None:
    mod, data = _add_mul()
    ref = generate_ref_data(mod, data)
    with pytest.raises(TVMValueError, match="needs input 'y'"):
        compile_and_run(AOTTestModel(module=mod, inputs={"x": data["x"]}, outputs=ref),
                        AOT_DEFAULT_RUNNER, "c", True)  # fmt: skip
    with pytest.raises(TVMValueError, match="corstone300"):
        compile_and_run(AOTTestModel(module=mod, inputs=data, outputs=ref),
                        AOT_CORSTONE300_RUNNER, "c", True)  # fmt: skip


def test_a_relay_function_is_taken_as_main() -> None:
    x = relay.var("x", shape=(3,), dtype="float32")
    func = relay.Function([x], relay.multiply(x, x))
    data = {"x": np.array([1.0, -2.0, 3.0], dtype="float32")}
    ref = generate_ref_data(func, data)
    np.testing.assert_array_equal(ref["output"], [1.0, 4.0, 9.0])
    assert compile_and_run(AOTTestModel(module=func, inputs=data, outputs=ref),
                           AOT_DEFAULT_RUNNER, "c", True)  # fmt: skip


def test_requires_package_skips_naming_the_missing_package() -> None:
    def probe() -> None: ...

    marked = requires_package("numpy", "no_such_package_h10")(probe)
    skips = {m.kwargs["reason"]: m.args[0] for m in marked.pytestmark}  # type: ignore[attr-defined]
    assert skips == {"Cannot import 'numpy'": False, "Cannot import 'no_such_package_h10'": True}
