"""torch.backends.openmp: ember's intra-op threads are Python threads (ember.set_num_threads), not OpenMP."""


def is_available():
    return False
