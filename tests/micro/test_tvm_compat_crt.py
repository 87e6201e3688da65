"""TVM v0.18's way to run kernels on the host CRT: ``tvm.target.target.micro("host")``,
``tvm.build(..., runtime=Runtime("crt", {"system-lib": True}))`` and ``generate_project("crt")``
with the module that build returns (compiled for this machine, it keeps its C).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pytvm as tvm
from pytvm.ffi.errors import TVMValueError
from pytvm.relay.backend import Runtime


def _add(target: tvm.target.Target, runtime: Runtime | None) -> object:
    a = tvm.te.placeholder((2,), dtype="int8", name="a")
    b = tvm.te.placeholder((1,), dtype="int8", name="b")
    c = tvm.te.compute(a.shape, lambda i: a[i] + b[0], name="c")
    sched = tvm.te.create_schedule(c.op)
    return tvm.build(sched, [a, b, c], target, runtime=runtime, name="add")


def test_micro_targets() -> None:
    assert str(tvm.target.target.micro("host")) == "c -model=host"
    m4 = tvm.target.target.micro("stm32l4r5zi")
    assert "-mcpu=cortex-m4" in str(m4) and not m4.is_host
    with pytest.raises(ValueError, match="not one of"):
        tvm.target.target.micro("no-such-board")


def test_build_with_a_crt_runtime_is_a_system_library() -> None:
    target = tvm.target.target.micro("host")
    mod = _add(tvm.target.Target(target, target), Runtime("crt", {"system-lib": True}))
    assert "--system-lib" in mod.target  # type: ignore[attr-defined]
    assert "TVMSystemLibEntryPoint" in mod.get_source()  # type: ignore[attr-defined]


@pytest.mark.parametrize("kind", ["c", "llvm"])
def test_generate_project_with_a_host_built_module(tmp_path: Path, kind: str) -> None:
    text = str(tvm.target.target.micro("host"))
    target = tvm.target.Target(kind + text[1:])  # TVM's test_compile_runtime_llvm does so
    mod = _add(tvm.target.Target(target, target), Runtime("crt", {"system-lib": True}))
    template = Path(tvm.micro.get_microtvm_template_projects("crt"))
    project = tvm.micro.generate_project(template, mod, tmp_path / "project", {"verbose": 1})
    project.build()
    project.flash()
    with tvm.micro.Session(project.transport()) as sess:
        a = tvm.nd.array(np.array([2, 3], dtype="int8"), device=sess.device)
        b = tvm.nd.array(np.array([4], dtype="int8"), device=sess.device)
        c = tvm.nd.array(np.zeros(2, dtype="int8"), device=sess.device)
        sess.get_system_lib().get_function("add")(a, b, c)
        np.testing.assert_array_equal(c.numpy(), [6, 7])


def test_generate_project_needs_a_system_library(tmp_path: Path) -> None:
    mod = _add(tvm.target.Target("c"), None)
    with pytest.raises(TVMValueError, match="system-lib"):
        tvm.micro.generate_project("crt", mod, tmp_path / "project")
