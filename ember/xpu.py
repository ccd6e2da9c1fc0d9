"""ember.xpu: torch.xpu on a build without Intel GPU support (``is_available()`` False)."""


def is_available():
    return False


def device_count():
    return 0


def manual_seed(seed):
    """Accepted and ignored without an XPU, as torch."""
    int(seed)


def manual_seed_all(seed):
    """Accepted and ignored without an XPU, as torch."""
    int(seed)


def synchronize(device=None):
    raise AssertionError("Torch not compiled with XPU enabled")


def empty_cache():
    """Nothing is cached without an XPU."""
