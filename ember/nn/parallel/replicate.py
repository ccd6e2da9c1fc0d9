"""torch.nn.parallel.replicate: copies of a module on several accelerators (its parameters broadcast to them). On a
machine without accelerators torch's refuses a CPU device by name and fails to broadcast to device indices; ember's
raises the same errors.

>>> import ember
>>> from ember.nn.parallel import replicate
>>> replicate(ember.nn.Linear(2, 2), ['cpu'])
Traceback (most recent call last):
ValueError: Expected a non cpu device, but got: cpu
"""
__all__ = ['replicate']


def replicate(network, devices, detach=False):
    """torch's ``replicate``; ember has no accelerator: torch's CPU-only errors."""
    for d in devices:
        if str(d).split(':')[0] == 'cpu':
            raise ValueError(f"Expected a non cpu device, but got: {d}")
    raise AssertionError("Broadcast function not implemented for CPU tensors")
