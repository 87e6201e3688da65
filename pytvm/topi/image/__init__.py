"""Image operators (TVM's ``topi.image``): ``resize1d``, ``resize2d``, ``resize3d``,
``crop_and_resize``.
"""

from __future__ import annotations

from .resize import crop_and_resize, resize1d, resize2d, resize3d

__all__ = ["crop_and_resize", "resize1d", "resize2d", "resize3d"]
