"""torch.distributed.constants: the default timeouts of process groups.

``default_pg_timeout`` (30 minutes) bounds every collective of a group made without ``timeout``;
``default_pg_nccl_timeout`` is None, as in a torch built without NCCL (ember has no NCCL: a ``nccl``
group is refused by ``init_process_group``).

>>> from ember.distributed.constants import default_pg_timeout
>>> default_pg_timeout
datetime.timedelta(seconds=1800)
"""
from datetime import timedelta

__all__ = ['default_pg_timeout', 'default_pg_nccl_timeout']

default_pg_timeout = timedelta(minutes=30)
default_pg_nccl_timeout = None
