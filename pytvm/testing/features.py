"""TVM's ``tvm.testing.requires_*`` marks: what a test needs, and whether pytvm has it here.

Each :class:`Feature` is a decorator (``@tvm.testing.requires_cuda``) and gives its pytest
marks (``requires_cuda.marks()``): the feature's own mark (so ``pytest -m cuda`` selects its
tests) and a skip, with the reason, where the feature is missing. pytvm runs on CPUs: the GPU
and accelerator features are missing everywhere; ``llvm`` needs llvmlite; ``aarch``/``arm_fp``
need an Arm host.

Examples
--------
>>> from pytvm import testing
>>> testing.requires_cuda.is_available(), testing.requires_rpc.is_available()
(False, True)
>>> testing.requires_cuda.why_missing()
'CUDA: pytvm has no GPU code generator'
"""

from __future__ import annotations

import importlib.util
import os
import platform
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

import pytest

from .env import has_llvm
from .targets import target_kind_enabled

__all__ = ["Feature", "requires_package", "skip_if_wheel_test", "uses_gpu"]

_F = TypeVar("_F", bound=Callable[..., Any])


class Feature:
    """Something a test may need: ``name`` is its pytest mark, ``available`` says whether it is
    here (``True``, or ``False``/a string saying why not), ``target_kind`` a target kind that must
    also be among the enabled test targets (``TVM_TEST_TARGETS``).
    """

    all_features: ClassVar[dict[str, Feature]] = {}

    def __init__(
        self,
        name: str,
        long_name: str | None = None,
        *,
        available: Callable[[], bool | str] = lambda: False,
        target_kind: str | None = None,
    ) -> None:
        self.name = name
        self.long_name = long_name or name
        self._available = available
        self.target_kind = target_kind
        Feature.all_features[name] = self

    def why_missing(self) -> str | None:
        """``None`` when the feature is here, else the reason tests needing it are skipped."""
        if self.target_kind is not None and not target_kind_enabled(self.target_kind):
            return f"{self.long_name}: target kind {self.target_kind!r} is not in TVM_TEST_TARGETS"
        answer = self._available()
        if answer is True:
            return None
        return (
            f"{self.long_name}: {answer}"
            if isinstance(answer, str)
            else (f"{self.long_name} is not available to pytvm here")
        )

    def is_available(self) -> bool:
        """Whether tests that need this feature run here."""
        return self.why_missing() is None

    def marks(self, support_required: str = "compile-and-run") -> list[Any]:
        """The feature's mark and, where it is missing, a skip with the reason."""
        del support_required  # pytvm compiles and runs in one place
        reason = self.why_missing()
        return [
            getattr(pytest.mark, self.name),
            pytest.mark.skipif(reason is not None, reason=reason or ""),
        ]

    def register_marker(self, config: Any) -> None:
        """Declare the mark to pytest (the plugin does it for every feature)."""
        config.addinivalue_line(
            "markers", f"{self.name}: mark a test as requiring {self.long_name}"
        )

    def __call__(self, func: _F) -> _F:
        """Apply :meth:`marks` to the test ``func``."""
        for mark in self.marks():
            func = mark(func)
        return func


def _never(why: str) -> Callable[[], str]:
    return lambda: why


_NO_GPU = "pytvm has no GPU code generator"


def _llvm() -> bool | str:
    return True if has_llvm() else "pytvm's LLVM backend needs llvmlite"


def _arm() -> bool | str:
    return True if platform.machine() in ("aarch64", "arm64") else "needs an Arm host"


requires_gpu = Feature("gpu", "a GPU", available=_never(_NO_GPU))
requires_cuda = Feature("cuda", "CUDA", available=_never(_NO_GPU), target_kind="cuda")
requires_cudagraph = Feature("cudagraph", "CUDA graphs", available=_never(_NO_GPU))
requires_cudnn = Feature("cudnn", "cuDNN", available=_never(_NO_GPU))
requires_cublas = Feature("cublas", "cuBLAS", available=_never(_NO_GPU))
requires_nvptx = Feature("nvptx", "NVPTX", available=_never(_NO_GPU), target_kind="nvptx")
requires_tensorcore = Feature("tensorcore", "Tensor Cores", available=_never(_NO_GPU))
requires_rocm = Feature("rocm", "ROCm", available=_never(_NO_GPU), target_kind="rocm")
requires_opencl = Feature("opencl", "OpenCL", available=_never(_NO_GPU), target_kind="opencl")
requires_vulkan = Feature("vulkan", "Vulkan", available=_never(_NO_GPU), target_kind="vulkan")
requires_metal = Feature("metal", "Metal", available=_never(_NO_GPU), target_kind="metal")
requires_hexagon = Feature(
    "hexagon", "Hexagon code generation", available=_never("pytvm has no Hexagon code generator")
)
requires_llvm = Feature("llvm", "LLVM", available=_llvm, target_kind="llvm")
requires_aarch = Feature("aarch", "an AArch64 host", available=_arm)
requires_arm_fp = Feature("arm_fp", "Arm floating point", available=_arm)
requires_rpc = Feature("rpc", "RPC", available=lambda: True)
requires_micro = Feature("micro", "microTVM", available=lambda: True)
requires_cmsisnn = Feature("cmsisnn", "CMSIS-NN", available=_never("pytvm has no CMSIS-NN"))
requires_ethosn = Feature("ethosn", "Arm Ethos-N", available=_never("pytvm has no Ethos-N"))
requires_corstone300 = Feature(
    "corstone300", "Corstone-300 FVP", available=_never("pytvm has no Corstone-300 FVP")
)
requires_libtorch = Feature("libtorch", "libtorch", available=_never("pytvm has no libtorch"))
requires_x86 = Feature(
    "x86",
    "an x86 host",
    available=lambda: platform.machine() in ("x86_64", "AMD64", "i686") or "needs an x86 host",
)

#: Marks a test that may use a GPU target (``pytest -m gpu`` selects it); it still runs on CPUs.
uses_gpu = pytest.mark.gpu


def _importable(package: str) -> bool:
    try:
        return importlib.util.find_spec(package) is not None
    except (ImportError, ValueError):  # a parent package that is missing or not a package
        return False


def requires_package(*packages: str) -> Callable[[_F], _F]:
    """TVM's ``tvm.testing.requires_package("tflite", ...)``: skip the test, naming the
    package, when one of ``packages`` cannot be imported here.
    """

    def decorate(func: _F) -> _F:
        for package in packages:
            missing = not _importable(package)
            func = pytest.mark.skipif(missing, reason=f"Cannot import '{package}'")(func)
        return func

    return decorate


def skip_if_wheel_test(func: _F) -> _F:
    """Skip the test when ``TVM_WHEEL_TEST`` is set (a test of an installed wheel)."""
    wheel = bool(os.environ.get("TVM_WHEEL_TEST"))
    return pytest.mark.skipif(wheel, reason="not run against an installed wheel")(func)  # type: ignore[no-any-return]
