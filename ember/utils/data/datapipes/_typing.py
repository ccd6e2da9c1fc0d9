"""Metaclasses of DataPipes (torch's ``datapipes._typing``).

torch's metaclass also carries a runtime type system for DataPipes that torch itself
leaves disabled (its ``__new__`` returns before using it); ember keeps only what is live:
``_IterDataPipeMeta`` hooks every ``__iter__`` (see ``_hook_iterator``).
"""
from abc import ABCMeta

from ._hook_iterator import hook_iterator


class _DataPipeMeta(ABCMeta):
    """Metaclass of MapDataPipe (and base of IterDataPipe's): ``functional_datapipe`` checks for it."""


class _IterDataPipeMeta(_DataPipeMeta):
    """Metaclass of IterDataPipe: each class's ``__iter__`` resets the pipe and enforces one valid iterator."""

    def __new__(mcs, name, bases, namespace, **kwargs):
        if '__iter__' in namespace:
            hook_iterator(namespace)
        return super().__new__(mcs, name, bases, namespace, **kwargs)
