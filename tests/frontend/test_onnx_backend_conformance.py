"""ONNX's own backend tests, run against pytvm through ONNX's backend API
(``pytvm.frontend.onnx.backend``), compiled for the graph executor: the node tests of every
operator the importer converts, and the PyTorch-exported models (older opsets) built from them.

Cases that test what is out of scope are excluded; cases of features not supported yet are
expected to fail (so one that starts passing is reported). The patterns and reasons:
"""

from __future__ import annotations

import warnings

from pytvm.frontend.onnx.backend import PytvmBackend
from pytvm.testing.onnx_backend_cases import EXCLUDED, NOT_YET, backend_test, describe

#: What the compiled path does not support yet, beyond what the importer lacks.
COMPILED_NOT_YET: dict[str, str] = {}

__doc__ = (__doc__ or "") + describe(EXCLUDED, {**NOT_YET, **COMPILED_NOT_YET})

warnings.filterwarnings("ignore", category=RuntimeWarning, module="onnx")
globals().update(backend_test(PytvmBackend, __name__, COMPILED_NOT_YET).test_cases)
