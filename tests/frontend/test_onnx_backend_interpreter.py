"""ONNX's own backend tests run by the reference interpreter.

The selection of :mod:`pytvm.testing.onnx_backend_cases` checks the importer's and the
operators' semantics apart from the compiled kernels. The patterns and reasons of excluded
cases and expected failures:
"""

from __future__ import annotations

import warnings
from typing import Any

from onnx import ModelProto

from pytvm.frontend.onnx.backend import PytvmBackend, PytvmBackendRep
from pytvm.testing.onnx_backend_cases import EXCLUDED, NOT_YET, backend_test, describe


class InterpreterBackend(PytvmBackend):
    """pytvm's ONNX backend running models with the reference interpreter."""

    @classmethod
    def prepare(
        cls, model: ModelProto | str | bytes, device: str = "CPU", **kwargs: Any
    ) -> PytvmBackendRep:
        return super().prepare(model, device, executor="interpreter", **kwargs)


__doc__ = (__doc__ or "") + describe(EXCLUDED, NOT_YET)

warnings.filterwarnings("ignore", category=RuntimeWarning, module="onnx")
globals().update(backend_test(InterpreterBackend, __name__).test_cases)
