"""The graph a build makes keeps every parameter of main as an input, as TVM's does."""

from __future__ import annotations

import numpy as np

import pytvm
from pytvm import relay
from pytvm.contrib import graph_executor


def test_a_parameter_the_result_does_not_read_is_still_an_input() -> None:
    x = relay.var("x", shape=(2, 3))
    unused = relay.var("unused", shape=(4,))
    mod = relay.IRModule.from_expr(relay.Function([x, unused], relay.add(x, x)))
    m = graph_executor.GraphModule(relay.build(mod, "llvm")["default"](pytvm.cpu()))
    assert m.get_num_inputs() == 2 and m.get_input_index("unused") == 1
    m.set_input("unused", np.zeros(4, "float32"))
    m.run(x=np.ones((2, 3), "float32"))
    np.testing.assert_allclose(m.get_output(0).numpy(), np.full((2, 3), 2.0))
