"""``ember.distributed`` (torch.distributed): not built yet. Data-parallel training over MPI is its own issue
(collectives, DistributedDataParallel, a torchrun-compatible launcher). Until then this module tells the
truth: ``is_available()`` is False, nothing is initialized, and every call that would need a process group
raises an error that says so. Programs that import torch.distributed and use it only when asked (pytorch/
examples' imagenet with one process) run unchanged.

>>> import ember.distributed as dist
>>> dist.is_available(), dist.is_initialized()
(False, False)
"""
import enum

from .._absent import absent

__all__ = ['is_available', 'is_initialized', 'init_process_group', 'get_rank', 'get_world_size', 'barrier',
           'all_reduce', 'broadcast', 'destroy_process_group', 'ReduceOp', 'Backend', 'new_group', 'all_gather']

_WHY = ("ember.distributed has no process groups yet: data-parallel training over MPI is not built (see the "
        "project's distributed issue); run the program in one process")


def is_available():
    """False: ember has no distributed backend yet."""
    return False


def is_initialized():
    return False


def _not_initialized(*args, **kwargs):
    raise ValueError("Default process group has not been initialized, please make sure to call "
                     "init_process_group.")


def _absent(name):
    return absent(f'ember.distributed.{name}', f': {_WHY}', RuntimeError)


init_process_group = _absent('init_process_group')
new_group = _absent('new_group')
get_rank = get_world_size = barrier = all_reduce = broadcast = all_gather = destroy_process_group = _not_initialized


class ReduceOp(enum.Enum):
    SUM = 'sum'
    AVG = 'avg'
    PRODUCT = 'product'
    MIN = 'min'
    MAX = 'max'


class Backend(str):
    GLOO, NCCL, MPI = 'gloo', 'nccl', 'mpi'
