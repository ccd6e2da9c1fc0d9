"""torch.distributed.tensor.experimental: ``implicit_replication``.

Inside it torch's DTensor treats plain tensors met in an operator as replicated DTensors. ember has no DTensor
(the package's note), so every tensor is a plain one and the context changes nothing; libraries (opacus) enter it
around code that also runs on plain tensors.
"""
from contextlib import contextmanager

__all__ = ['implicit_replication']


@contextmanager
def implicit_replication():
    yield
