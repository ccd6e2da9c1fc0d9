"""torch.utils.dlpack: tensors to and from DLPack capsules (ember.from_dlpack, Tensor.__dlpack__)."""
from .._creation import from_dlpack  # noqa: F401


def to_dlpack(tensor):
    """A DLPack capsule sharing ``tensor``'s memory."""
    return tensor.__dlpack__()
