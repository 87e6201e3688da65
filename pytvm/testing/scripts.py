"""Test helper: a stand-alone script (``scripts/*.py``, ``bench/*.py``) loaded as a module."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from ..ffi.errors import TVMValueError

__all__ = ["load_script"]


def load_script(name: str, path: Path) -> ModuleType:
    """Execute the script at ``path`` as a module named ``name`` (registered in
    ``sys.modules`` first, so its dataclasses and pickles resolve) and return it.
    """
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise TVMValueError(f"load_script: {path} is not a Python file (expected a .py path)")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
