"""relay.testing: workloads build real networks with initialized parameters."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from pytvm import relay
from pytvm.ffi.errors import TVMValueError
from pytvm.relay.testing import init


def test_resnet_workload_has_the_layers_and_parameters() -> None:
    mod, params = relay.testing.resnet.get_workload(
        num_layers=18, batch_size=1, image_shape=(3, 224, 224)
    )
    main = mod["main"]
    assert main.params[0].name == "data"
    assert _tensor_type(main).shape == (1, 1000)
    convs = [n for n in params if n.endswith("_weight") and "conv" in n]
    assert len(convs) == 17  # the stem and two per unit in eight units
    assert params["stage4_unit1_sc_weight"].shape == (512, 256, 1, 1)
    assert np.all(params["bn0_moving_var"] == 1) and np.all(params["fc1_bias"] == 0)
    assert "nn.conv2d" in mod.astext(show_meta_data=False)


def test_small_resnet_runs_compiled_as_the_interpreter_does() -> None:
    mod, params = relay.testing.resnet.get_workload(
        num_layers=8, batch_size=1, num_classes=10, image_shape=(3, 16, 16)
    )
    data = np.random.default_rng(1).uniform(-1, 1, (1, 3, 16, 16)).astype("float32")
    ref = relay.create_executor("debug", mod).evaluate()(data, **params).numpy()
    out = relay.create_executor("graph", mod).evaluate()(data, **params).numpy()
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(out.sum(), 1.0, rtol=1e-5)  # a softmax


def test_xavier_scale_follows_the_fans() -> None:
    rng = np.random.default_rng(0)
    w = init.Xavier()("conv_weight", (64, 32, 3, 3), rng)
    bound = np.sqrt(3.0 / ((32 * 9 + 64 * 9) / 2))
    assert w.dtype == np.float32 and np.abs(w).max() <= bound
    with pytest.raises(TVMValueError, match="no rule"):
        init.Xavier()("conv_scale", (4,), rng)


def test_unknown_depth_is_refused() -> None:
    with pytest.raises(TVMValueError, match="17-layer"):
        relay.testing.resnet.get_workload(num_layers=17)


def _tensor_type(expr: Any) -> relay.TensorType:
    ty = expr.checked_type
    assert isinstance(ty, relay.TensorType)
    return ty
