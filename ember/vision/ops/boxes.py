"""``torchvision.ops.boxes``: where torchvision defines the box operations (segment-anything imports them from
here); ember's are in this package's ``__init__``."""
from . import box_convert, box_area, box_iou, nms, batched_nms  # noqa: F401

__all__ = ['box_convert', 'box_area', 'box_iou', 'nms', 'batched_nms']
