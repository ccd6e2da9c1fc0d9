"""torch.backends.mps on a machine without Metal: not built, not available."""


def is_available():
    return False


def is_built():
    return False
