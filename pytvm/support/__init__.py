"""Host-side helpers for tools outside Python (TVM's ``tvm.support``): temporary directories and
the system C compiler.

``utils`` (``tempdir``, ``TempDirectory``, ``filelock``, ``is_source_path``, ``which``) and ``cc``
(``create_shared``, ``create_executable``, ``create_staticlib``, ``cross_compiler``,
``get_cc``) keep TVM 0.27's module paths; TVM 0.18's ``tvm.contrib.utils`` and
``tvm.contrib.cc`` re-export them.
"""

from __future__ import annotations

from . import cc, utils

__all__ = ["cc", "utils"]
