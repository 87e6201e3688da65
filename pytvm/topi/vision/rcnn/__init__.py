"""Region-of-interest operators of Faster/Mask R-CNN (TVM's ``topi.vision.rcnn``)."""

from __future__ import annotations

from .roi_align import roi_align_nchw

__all__ = ["roi_align_nchw"]
