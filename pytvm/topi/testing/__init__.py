"""Numpy reference implementations of topi operators, used by tests (TVM's ``topi.testing``).

Every function computes the real result with numpy, following TVM's names, signatures and
semantics (layouts, padding conventions, dilation, groups), so a compiled kernel can be
compared against it.
"""

from __future__ import annotations

__all__: list[str] = []
