"""Helpers for tests: pytvm's own (compile C sources against pytvm's headers; RPC, graph and
tensor-expression helpers in the submodules) and TVM's ``tvm.testing`` names that TVM's test
files use: ``main``, ``assert_allclose``, the target parametrization (``parametrize_targets``,
``enabled_targets``, ``device_enabled``, ``exclude_targets``, ``known_failing_targets``),
``parameter``/``parameters``/``fixture``, the ``requires_*`` marks and ``uses_gpu``, ``env``.
TVM's pytest plugin is :mod:`pytvm.testing.plugin`. Only tests import this package.
"""

from __future__ import annotations

from pathlib import Path

from ..ffi import libinfo
from . import env
from .features import (
    Feature,
    requires_aarch,
    requires_arm_fp,
    requires_cmsisnn,
    requires_corstone300,
    requires_cublas,
    requires_cuda,
    requires_cudagraph,
    requires_cudnn,
    requires_ethosn,
    requires_gpu,
    requires_hexagon,
    requires_libtorch,
    requires_llvm,
    requires_metal,
    requires_micro,
    requires_nvptx,
    requires_opencl,
    requires_package,
    requires_rocm,
    requires_rpc,
    requires_tensorcore,
    requires_vulkan,
    requires_x86,
    skip_if_wheel_test,
    uses_gpu,
)
from .numerics import assert_prim_expr_equal, check_numerical_grads
from .parametrize import (
    exclude_targets,
    fixture,
    known_failing_targets,
    parameter,
    parameters,
    parametrize_targets,
)
from .span_filling import disable_span_filling, enable_span_filling
from .targets import DEFAULT_TEST_TARGETS, device_enabled, enabled_targets
from .tvm_helpers import assert_allclose, main, skip_if_32bit

__all__ = [
    "DEFAULT_TEST_TARGETS",
    "Feature",
    "assert_allclose",
    "assert_prim_expr_equal",
    "check_numerical_grads",
    "compile_c",
    "device_enabled",
    "disable_span_filling",
    "enable_span_filling",
    "enabled_targets",
    "env",
    "exclude_targets",
    "fixture",
    "known_failing_targets",
    "main",
    "parameter",
    "parameters",
    "parametrize_targets",
    "requires_aarch",
    "requires_arm_fp",
    "requires_cmsisnn",
    "requires_corstone300",
    "requires_cublas",
    "requires_cuda",
    "requires_cudagraph",
    "requires_cudnn",
    "requires_ethosn",
    "requires_gpu",
    "requires_hexagon",
    "requires_libtorch",
    "requires_llvm",
    "requires_metal",
    "requires_micro",
    "requires_nvptx",
    "requires_opencl",
    "requires_package",
    "requires_rocm",
    "requires_rpc",
    "requires_tensorcore",
    "requires_vulkan",
    "requires_x86",
    "skip_if_32bit",
    "skip_if_wheel_test",
    "uses_gpu",
]


def compile_c(source: str, workdir: Path, name: str = "lib") -> Path:
    """Compile ``source`` into ``workdir/<name>.so``, warnings as errors."""
    src = workdir / f"{name}.c"
    src.write_text(source)
    return libinfo.compile_shared([src], workdir / f"{name}.so", ["-Wall", "-Werror"])
