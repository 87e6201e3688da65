"""Image operators (TVM's ``topi.image``): ``resize2d``."""

from __future__ import annotations

from .resize import resize2d

__all__ = ["resize2d"]
