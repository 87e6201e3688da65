"""TVM's ``tvm.contrib.cudnn``: pytvm has no CUDA, so cuDNN never exists here.

Examples
--------
>>> from pytvm.contrib import cudnn
>>> cudnn.exists()
False
"""

from __future__ import annotations

__all__ = ["exists"]


def exists() -> bool:
    """Whether cuDNN can be used: never with pytvm (no CUDA code generator)."""
    return False
