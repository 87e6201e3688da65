"""Image operators (TVM's ``topi.image``): ``resize1d``, ``resize2d``, ``resize3d``,
``crop_and_resize``.
"""

from __future__ import annotations

from .grid_sample import affine_grid, grid_sample
from .resize import crop_and_resize, resize1d, resize2d, resize3d

__all__ = ["affine_grid", "crop_and_resize", "grid_sample", "resize1d", "resize2d", "resize3d"]
