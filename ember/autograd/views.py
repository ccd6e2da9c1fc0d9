"""In-place operations on views: rebasing the base's history (torch's CopySlices)."""


def copy_slices(view, tmp):
    raise NotImplementedError("in-place operations on views of tensors that require grad are not supported yet")
