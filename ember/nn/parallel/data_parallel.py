"""torch.nn.parallel.data_parallel: ``DataParallel`` and ``data_parallel``, where torch defines them (pickles and
printed class paths name this module)."""
from ..modules.module import Module

__all__ = ['DataParallel', 'data_parallel']


class DataParallel(Module):
    """Data parallelism over accelerators; on a CPU-only machine, the wrapped module run as it is (as torch).

    Example::

        >>> net = ember.nn.DataParallel(ember.nn.Linear(3, 2))
        >>> net(ember.ones(4, 3)).shape
        ember.Size([4, 2])
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        # as torch when no accelerator is found: device_ids are ignored and the module runs where it is
        self.module = module
        self.device_ids = []

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0, module_kwargs=None):
    """Functional ``DataParallel``; like torch on a machine without accelerators, it raises.

    Example::

        >>> ember.nn.parallel.data_parallel(ember.nn.Linear(3, 2), ember.ones(4, 3))
        Traceback (most recent call last):
        RuntimeError: device type could not be determined
    """
    raise RuntimeError('device type could not be determined')
