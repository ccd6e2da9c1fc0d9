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
from .distributed import DistributedDataParallel
from .scatter_gather import scatter, gather
from .parallel_apply import parallel_apply
from .replicate import replicate

__all__ = ['DataParallel', 'data_parallel', 'DistributedDataParallel', 'scatter', 'gather', 'parallel_apply',
           'replicate']


# the submodule is loaded here and its names bound after it, as torch's package does: a later
# ``import torch.nn.parallel.data_parallel`` then finds it loaded and leaves ``data_parallel`` the function
from .data_parallel import DataParallel, data_parallel  # noqa: E402
