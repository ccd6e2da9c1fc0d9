"""``torch.nn.parallel``: ``DistributedDataParallel`` (over ``ember.distributed``), and ``DataParallel`` and
``data_parallel`` for a machine without accelerators.

torch's data parallelism replicates a module over GPUs and scatters the batch.
When no accelerator is available torch's ``DataParallel`` keeps the module as it
is and calls it directly (``device_ids`` is empty) and the functional
``data_parallel`` raises; ember, which has no accelerator, does the same: programs such as
pytorch/examples' dcgan ``import torch.nn.parallel`` and wrap modules
unconditionally, and run unchanged. ``DistributedDataParallel`` is in
``distributed.py`` (NOTE [DDP reducer]); ``scatter``/``gather`` in ``scatter_gather.py``.
"""
from ..modules.module import Module
from .distributed import DistributedDataParallel
from .scatter_gather import scatter, gather

__all__ = ['DataParallel', 'data_parallel', 'DistributedDataParallel', 'scatter', 'gather']


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


DataParallel.__module__ = 'ember.nn.parallel.data_parallel'   # torch's path for it (NOTE [torch's module paths])
from . import data_parallel  # noqa: E402,F401
