"""TVM 0.18's ``tvm.contrib.utils``: the names of :mod:`pytvm.support.utils` (TVM 0.27's path).

Examples
--------
>>> from pytvm.contrib import utils
>>> utils.tempdir().__class__.__name__
'TempDirectory'
"""

from __future__ import annotations

from ..support.utils import FileLock, TempDirectory, filelock, is_source_path, tempdir, which

__all__ = ["FileLock", "TempDirectory", "filelock", "is_source_path", "tempdir", "which"]
