"""ember.multiprocessing: torch.multiprocessing, Python's multiprocessing with tensors in shared memory.

Everything of the standard ``multiprocessing`` module is here (``Process``,
``Queue``, ``SimpleQueue``, ``Pool``, ``set_start_method``, ``get_context``,
``cpu_count``, ...). Importing this module makes a tensor sent to another
process (a queue, a pipe, a spawned process's arguments) travel as a reference
to shared memory, moving it there first, as torch does (NOTE [shared tensors]
in ember/_shared.py); ``spawn`` starts ``nprocs`` copies of a function and
re-raises a child's exception in the parent as ``ProcessRaisedException``.

>>> import ember, ember.multiprocessing as mp
>>> w = ember.zeros(3).share_memory_()      # children's in-place writes to w land here
>>> w.is_shared()
True
"""
import multiprocessing
from multiprocessing import *  # noqa: F401,F403  torch.multiprocessing re-exports the standard module

from .._shared import register_reducers as _register_reducers
from .spawn import (spawn, start_processes, ProcessContext, SpawnContext, ProcessException,  # noqa: F401
                    ProcessRaisedException, ProcessExitedException)

__all__ = ['spawn', 'start_processes', 'ProcessContext', 'SpawnContext', 'ProcessException',
           'ProcessRaisedException', 'ProcessExitedException', 'set_sharing_strategy', 'get_sharing_strategy',
           'get_all_sharing_strategies'] + list(getattr(multiprocessing, '__all__', []))

_register_reducers()
_strategy = ['file_descriptor']


def get_all_sharing_strategies():
    """ember shares tensors through named POSIX shared-memory segments, torch's two strategies in one."""
    return {'file_descriptor', 'file_system'}


def set_sharing_strategy(new_strategy):
    if new_strategy not in get_all_sharing_strategies():
        raise AssertionError(f"invalid sharing strategy {new_strategy!r}")
    _strategy[0] = new_strategy


def get_sharing_strategy():
    return _strategy[0]
