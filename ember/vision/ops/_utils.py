"""Helpers the region ops share (torchvision's ``ops/_utils.py``)."""
import ember


def rois_with_batch_index(boxes):
    """Regions as one ``(K, 5)`` tensor of ``(batch index, x1, y1, x2, y2)``, from that tensor itself or from a
    list of ``(L, 4)`` tensors, one per image; a wrong shape fails torchvision's assertion."""
    if isinstance(boxes, (list, tuple)):
        if any(b.size(1) != 4 for b in boxes):
            raise AssertionError("The shape of the tensor in the boxes list is not correct as List[Tensor[L, 4]]")
        rows = [ember.cat([ember.full((b.shape[0], 1), i, dtype=b.dtype), b], dim=1) for i, b in enumerate(boxes)]
        return ember.cat(rows, dim=0) if rows else ember.empty((0, 5))
    if not isinstance(boxes, ember.Tensor):
        raise AssertionError("boxes is expected to be a Tensor[L, 5] or a List[Tensor[K, 4]]")
    if boxes.size(1) != 5:
        raise AssertionError("The boxes tensor shape is not correct as Tensor[K, 5]")
    return boxes
