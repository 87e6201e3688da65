"""Host-side helpers for tools outside Python (TVM's ``tvm.support``): temporary directories, the
system C compiler and tar archives of object files.

``utils`` (``tempdir``, ``TempDirectory``, ``filelock``, ``is_source_path``, ``which``), ``cc``
(``create_shared``, ``create_executable``, ``create_staticlib``, ``cross_compiler``,
``get_cc``) and ``tar`` (``tar``, ``untar``) keep TVM 0.27's module paths; TVM 0.18's
``tvm.contrib.utils`` and ``tvm.contrib.cc`` re-export the first two.
"""

from __future__ import annotations

from . import cc, tar, utils

__all__ = ["cc", "tar", "utils"]
