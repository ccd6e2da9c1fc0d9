"""ember.mps: torch.mps on a machine without Apple's Metal backend (``is_available()`` False)."""


def is_available():
    return False


def device_count():
    return 0


def manual_seed(seed):
    """Accepted and ignored without the MPS backend, as torch."""
    int(seed)


def seed():
    """Accepted and ignored without the MPS backend."""


def synchronize():
    raise RuntimeError("Cannot execute deviceSynchronize() without MPS backend.")


def empty_cache():
    """Nothing is cached without MPS."""


def get_rng_state():
    """No generator without the MPS backend: torch's error."""
    raise RuntimeError("Cannot execute getDefaultGenerator() without MPS backend.")


def set_rng_state(new_state):
    """No generator without the MPS backend: torch's error."""
    raise RuntimeError("Cannot execute getDefaultGenerator() without MPS backend.")
