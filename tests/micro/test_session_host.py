"""``pytvm.micro.Session`` with the ``host`` template over a model written here in C with the AOT
interface (two inputs, one named with a character C identifiers lack; int32; an error path):
the executor's description, set_input / run / get_output by index and name, NDArray values,
time_evaluator on ``run``, and refusals that leave the session working.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

import pytvm as tvm
from pytvm.micro.project import GeneratedProject, generate_project
from pytvm.micro.session import Session
from pytvm.runtime.executor import AotModule
from pytvm.runtime.source_module import SourceModule

pytestmark = pytest.mark.needs_cc

HEADER = """\
#ifndef TVMGEN_DEFAULT_H_
#define TVMGEN_DEFAULT_H_
#include <stdint.h>
struct tvmgen_default_inputs { void* a; void* b_0; };
struct tvmgen_default_outputs { void* output; };
#define TVMGEN_DEFAULT_A_SIZE 24
#define TVMGEN_DEFAULT_B_0_SIZE 24
#define TVMGEN_DEFAULT_OUTPUT_SIZE 24
int32_t tvmgen_default_run(struct tvmgen_default_inputs* inputs,
                           struct tvmgen_default_outputs* outputs);
#endif
"""

RUN = """\
#include "tvmgen_default.h"
/* out = 3 * a - b; a[0] == -999 makes the model fail with code 5. */
int32_t tvmgen_default_run(struct tvmgen_default_inputs* inputs,
                           struct tvmgen_default_outputs* outputs) {
  const int32_t* a = (const int32_t*)inputs->a;
  const int32_t* b = (const int32_t*)inputs->b_0;
  int32_t* out = (int32_t*)outputs->output;
  int i;
  if (a[0] == -999) {
    return 5;
  }
  for (i = 0; i < 6; ++i) {
    out[i] = 3 * a[i] - b[i];
  }
  return 0;
}
"""


@dataclass(frozen=True)
class Tensor:
    name: str
    shape: tuple[int, ...]
    dtype: str


@dataclass(frozen=True)
class HandWrittenModel:
    """The AOT factory's attributes a project reads, for a model written in C."""

    lib: SourceModule
    mod_name: str
    inputs: list[Tensor]
    outputs: list[Tensor]


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> GeneratedProject:
    lib = SourceModule(
        {"default_lib0.c": RUN}, "c", ["tvmgen_default_run"], {"tvmgen_default.h": HEADER}
    )
    model = HandWrittenModel(
        lib,
        "default",
        [Tensor("a", (2, 3), "int32"), Tensor("b:0", (2, 3), "int32")],
        [Tensor("output", (2, 3), "int32")],
    )
    proj = generate_project(
        "host", model, tmp_path_factory.mktemp("hand") / "proj", {"workspace_size_bytes": 65536}
    )
    proj.build()
    return proj


A = np.arange(6, dtype="int32").reshape(2, 3)
B = np.full((2, 3), 7, dtype="int32")


def test_executor_describes_the_model(project: GeneratedProject) -> None:
    with Session(project.transport()) as sess:
        executor = sess.create_aot_executor()
        assert isinstance(executor, AotModule)
        assert executor.get_num_inputs() == 2 and executor.get_num_outputs() == 1
        assert executor.get_input_index("b:0") == 1
        assert executor.get_input_index("missing") == -1
        assert executor.get_input_name(0) == "a"
        shapes, dtypes = executor.get_input_info()
        assert shapes == {"a": (2, 3), "b:0": (2, 3)}
        assert dtypes == {"a": "int32", "b:0": "int32"}
        assert executor.get_output_info() == ({"output": (2, 3)}, {"output": "int32"})


def test_run_by_index_name_and_keywords(project: GeneratedProject) -> None:
    with Session(project.transport()) as sess:
        executor = sess.create_aot_executor()
        executor.set_input(0, A)
        executor.set_input("b:0", tvm.nd.array(B, sess.device))  # an array on the device
        executor.run()
        out = executor.get_output(0)
        assert out.device == sess.device
        np.testing.assert_array_equal(out.numpy(), 3 * A - B)
        executor.run(a=B)  # keyword inputs; b:0 keeps its value
        np.testing.assert_array_equal(executor.get_output(0).numpy(), 3 * B - B)
        np.testing.assert_array_equal(executor.get_input("b:0").numpy(), B)
        held = tvm.nd.empty((2, 3), "int32", sess.device)
        assert executor.get_output(0, out=held) is held
        np.testing.assert_array_equal(held.numpy(), 2 * B)


def test_tvm_script_pattern_get_input_copyfrom(project: GeneratedProject) -> None:
    """TVM's microTVM tutorials wrap the executor again and fill inputs through get_input."""
    project.flash()
    with Session(transport_context_manager=project.transport()) as sess:
        executor = AotModule(sess.create_aot_executor())
        executor.get_input("a").copyfrom(A)
        executor.get_input(1).copyfrom(B)
        executor.run()
        np.testing.assert_array_equal(executor.get_output(0).numpy(), 3 * A - B)
        executor.set_input("a", B)  # a set input is no longer overwritten by its held array
        executor.run()
        np.testing.assert_array_equal(executor.get_output(0).numpy(), 3 * B - B)


def test_time_evaluator_on_run(project: GeneratedProject) -> None:
    with Session(project.transport()) as sess:
        executor = sess.create_aot_executor()
        executor.set_input(0, A)
        executor.set_input(1, B)
        result = executor.module.time_evaluator("run", sess.device, number=20, repeat=3)()
        assert len(result.results) == 3 and result.mean > 0


def test_bad_inputs_are_refused_and_the_session_goes_on(project: GeneratedProject) -> None:
    with Session(project.transport()) as sess:
        executor = sess.create_aot_executor()
        with pytest.raises(ValueError, match=r"input 'a' is int32\[2, 3\], the value given is"):
            executor.set_input("a", A.astype("float32"))
        with pytest.raises(KeyError, match="the model has no input 'c'"):
            executor.set_input("c", A)
        with pytest.raises(ValueError, match="input index 2 is out of range"):
            executor.set_input(2, A)
        # on the device: an array of the wrong shape or dtype, a bad output index
        wrong = tvm.nd.array(np.zeros((3, 2), "int32"), sess.device)
        with pytest.raises(
            ValueError, match=r"tensor 'a' has shape \[2,3\], the array given \[3,2\]"
        ):
            executor.module["set_input"](0, wrong)
        floats = tvm.nd.array(np.zeros((2, 3), "float32"), sess.device)
        with pytest.raises(TypeError, match="has dtype int32, the array given float32"):
            executor.module["set_input"]("b:0", floats)
        with pytest.raises(IndexError, match="get_output: index 1 is out of range"):
            executor.module["get_output"](1, floats)
        with pytest.raises(ValueError, match="no model named 'other'"):
            sess.get_function("tvm.aot_executor.create")("other")
        # the model's own error code
        executor.set_input("a", np.full((2, 3), -999, "int32"))
        with pytest.raises(RuntimeError, match="tvmgen_default_run returned 5"):
            executor.run()
        executor.run(a=A, **{"b:0": B})
        np.testing.assert_array_equal(executor.get_output(0).numpy(), 3 * A - B)


def test_session_outside_with_block_is_refused(project: GeneratedProject) -> None:
    sess = Session(project.transport())
    with pytest.raises(RuntimeError, match="is not open"):
        sess.get_system_lib()
    with pytest.raises(TypeError, match="Session needs a transport"):
        Session()
