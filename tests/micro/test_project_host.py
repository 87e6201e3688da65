"""``pytvm.micro.generate_project`` with the ``host`` template: templates, options, a standalone
project folder, builds and their failures, and kernels of a source module served by the
system library.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import pytvm as tvm
from pytvm import te
from pytvm.micro.project import (
    GeneratedProject,
    generate_project,
    get_microtvm_template_projects,
)
from pytvm.micro.session import Session
from pytvm.runtime.source_module import SourceModule

pytestmark = pytest.mark.needs_cc

N = 64


@pytest.fixture(scope="module")
def kernel_project(tmp_path_factory: pytest.TempPathFactory) -> GeneratedProject:
    """A host project of one kernel built for the Cortex-M4 target (a source module), built."""
    a = te.placeholder((N,), name="A")
    b = te.compute((N,), lambda i: a[i] * 2.0 + 1.0, name="B")
    mod = tvm.build(
        te.create_schedule(b.op), [a, b], target="c -mcpu=cortex-m4 --system-lib", name="axpb"
    )
    assert isinstance(mod, SourceModule)
    project = generate_project(
        get_microtvm_template_projects("crt"), mod, tmp_path_factory.mktemp("k") / "proj"
    )
    project.build()
    return project


def test_template_projects_by_platform_name() -> None:
    assert Path(get_microtvm_template_projects("crt")).name == "host"
    assert get_microtvm_template_projects("host") == get_microtvm_template_projects("crt")
    assert Path(get_microtvm_template_projects("qemu-cortex-m4")).name == "qemu-cortex-m4"
    with pytest.raises(ValueError, match="no microTVM template for platform 'arduino'"):
        get_microtvm_template_projects("arduino")


def test_project_is_standalone(kernel_project: GeneratedProject) -> None:
    root = kernel_project.project_dir
    assert (root / "runtime" / "src" / "crt" / "aot_executor" / "aot_executor.c").is_file()
    assert (root / "runtime" / "include" / "pytvm" / "c_runtime_api.h").is_file()
    assert (root / "model" / "src" / "axpb.c").is_file()
    assert (root / "build" / "device").is_file()
    package = str(Path(tvm.__file__).resolve().parent)
    for name in ("Makefile", "project.mk"):
        assert package not in (root / name).read_text()
    info = json.loads((root / "project.json").read_text())
    assert info["template"] == "host" and info["model"]["executor"] == "system-lib"
    assert GeneratedProject.from_directory(root).options["build_timeout"] == 300


def test_kernel_runs_through_system_lib(kernel_project: GeneratedProject) -> None:
    with Session(kernel_project.transport()) as sess:
        x = np.arange(N, dtype="float32")
        a = tvm.nd.array(x, sess.device)
        b = tvm.nd.empty((N,), "float32", sess.device)
        sess.get_system_lib()["axpb"](a, b)
        np.testing.assert_allclose(b.numpy(), x * 2 + 1)
        with pytest.raises(AttributeError, match="missing"):
            sess.get_system_lib()["missing"]
        timer = sess.get_system_lib().time_evaluator("axpb", sess.device, number=5)
        assert timer(a, b).mean > 0
        with pytest.raises(RuntimeError, match="no AOT executor"):
            sess.create_aot_executor()


def test_unknown_option_is_refused(tmp_path: Path) -> None:
    mod = SourceModule({"k.c": "int k(void) { return 0; }\n"}, "c", ["k"])
    with pytest.raises(ValueError, match=r"no option\(s\) \['flash_speed'\]; its options are"):
        generate_project("host", mod, tmp_path / "p", {"flash_speed": 3})


def test_non_c_module_is_refused(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="generate_project needs C sources"):
        generate_project("host", object(), tmp_path / "p")


def test_build_failure_shows_compiler_output(tmp_path: Path) -> None:
    broken = SourceModule({"bad.c": "int broken(void) { return undeclared_name; }\n"}, "c", ["b"])
    project = generate_project("host", broken, tmp_path / "p")
    with pytest.raises(RuntimeError, match=r"(?s)building project .* failed.*undeclared_name"):
        project.build()
    with pytest.raises(ValueError, match=r"call project\.build"):
        project.flash()


def test_project_folder_must_be_new(kernel_project: GeneratedProject) -> None:
    mod = SourceModule({"k.c": "int k(void) { return 0; }\n"}, "c", ["k"])
    with pytest.raises(ValueError, match="exists and is not empty"):
        generate_project("host", mod, kernel_project.project_dir)


def test_qemu_template_refuses_an_unknown_board(tmp_path: Path) -> None:
    mod = SourceModule({"k.c": "int k(void) { return 0; }\n"}, "c -mcpu=cortex-m4", ["k"])
    with pytest.raises(ValueError, match="board 'stm32f746' has no QEMU machine"):
        generate_project("qemu-cortex-m4", mod, tmp_path / "p", {"board": "stm32f746"})
