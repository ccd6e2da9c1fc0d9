"""``ember.distributed`` (torch.distributed): process groups, collectives and point-to-point messages on MPI.

Collectives are operators of the ``c10d`` namespace, so dispatch modes see them; the data moves through
mpi4py's buffer methods on the tensors' memory (MPICH: shared memory on one machine, its network module
between machines). Start ranks with ``emberrun --nproc_per_node=N script.py`` (``ember.distributed.run``,
torchrun's flags and environment), with ``mpiexec -n N python script.py``, with ``mp.spawn``, or by hand with
``RANK``/``WORLD_SIZE``/``MASTER_ADDR``/``MASTER_PORT``. ``backend='gloo'`` runs on MPI (README, "Distributed
training", says what differs). Without mpi4py, ``is_available()`` is False and ``init_process_group`` says how
to install it (``pip install 'ember[distributed]'``).

>>> import ember.distributed as dist
>>> dist.is_initialized()
False
"""
from .distributed_c10d import *  # noqa: F401,F403
from .distributed_c10d import (__all__ as _c10d_all, new_subgroups_by_enumeration,  # noqa: F401
                               is_torchelastic_launched)
from .errors import DistError, DistBackendError, DistNetworkError, DistStoreError  # noqa: F401
from ._store import Store, HashStore, FileStore, TCPStore, PrefixStore  # noqa: F401
from .utils import _broadcast_coalesced, _verify_params_across_processes  # noqa: F401,E402  torch's C++ helpers
from . import algorithms  # noqa: F401,E402  torch.distributed.algorithms (DDP communication hooks)
from . import constants  # noqa: F401  torch.distributed.constants (default timeouts)
from . import rpc  # noqa: F401  torch.distributed.rpc (is_available() is False: ember has no RPC)
from . import _c10d_functional_ops  # noqa: F401,E402  ops._c10d_functional / c10d_functional (functional collectives)
from .device_mesh import DeviceMesh, init_device_mesh  # noqa: F401  torch.distributed.DeviceMesh

__all__ = list(_c10d_all) + ['Store', 'HashStore', 'FileStore', 'TCPStore', 'PrefixStore']
