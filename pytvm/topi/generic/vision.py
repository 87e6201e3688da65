"""TVM's ``topi.generic.vision`` schedules: each computes its operator as written."""

from __future__ import annotations

from .default import as_written

__all__ = [
    "schedule_get_valid_counts",
    "schedule_multibox_detection",
    "schedule_multibox_prior",
    "schedule_multibox_transform_loc",
    "schedule_nms",
    "schedule_proposal",
    "schedule_reorg",
    "schedule_roi_align",
    "schedule_roi_pool",
]

schedule_reorg = as_written("schedule_reorg", "topi.vision.reorg")
schedule_get_valid_counts = as_written("schedule_get_valid_counts", "topi.vision.get_valid_counts")
schedule_nms = as_written("schedule_nms", "topi.vision.non_max_suppression")
schedule_multibox_prior = as_written("schedule_multibox_prior", "topi.vision.ssd.multibox_prior")
schedule_multibox_transform_loc = as_written(
    "schedule_multibox_transform_loc", "topi.vision.ssd.multibox_transform_loc"
)
schedule_multibox_detection = as_written(
    "schedule_multibox_detection", "topi.vision.ssd.multibox_detection"
)
schedule_roi_align = as_written("schedule_roi_align", "topi.vision.rcnn.roi_align")
schedule_roi_pool = as_written("schedule_roi_pool", "topi.vision.rcnn.roi_pool")
schedule_proposal = as_written("schedule_proposal", "topi.vision.rcnn.proposal")
