"""torch.distributed's exception classes: every failure of a process group is a ``DistError``, a RuntimeError.

``DistBackendError``: a collective failed (a rank died, a timeout, ranks calling different collectives);
``DistNetworkError``: the rendezvous could not connect or listen; ``DistStoreError``: the rendezvous itself
failed (a world-size mismatch, a rank missing past the timeout).

>>> issubclass(DistBackendError, RuntimeError)
True
"""

__all__ = ['DistError', 'DistBackendError', 'DistNetworkError', 'DistStoreError']


class DistError(RuntimeError):
    """An error of ``ember.distributed``."""


class DistBackendError(DistError):
    """A collective or point-to-point operation failed."""


class DistNetworkError(DistError):
    """The rendezvous could not connect to, or listen at, ``MASTER_ADDR:MASTER_PORT``."""


class DistStoreError(DistError):
    """The rendezvous failed (another world size, a rank taken twice, ranks missing past the timeout)."""
