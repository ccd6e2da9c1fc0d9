"""IterDataPipe and MapDataPipe: datasets that chain into pipelines by name (torch's ``datapipes.datapipe``).

A DataPipe class registered with ``functional_datapipe('name')`` becomes a method of every
DataPipe of its kind: ``dp.map(fn)`` is ``Mapper(dp, fn)``. The registry is a class-level
dict per kind, read by ``__getattr__``. The graph of a pipeline (which DataPipe reads
which) is found by ``ember.utils.data.graph.traverse_dps`` from the DataPipes' attributes.
"""
import functools
import pickle
from typing import Callable, Iterable, Iterator, Optional, TypeVar

from ..dataset import Dataset, IterableDataset
from ._typing import _DataPipeMeta, _IterDataPipeMeta

__all__ = ['DataChunk', 'DFIterDataPipe', 'IterDataPipe', 'MapDataPipe']

_T = TypeVar('_T')
_T_co = TypeVar('_T_co', covariant=True)


class DataChunk(list):
    """A batch as ``dp.batch(n)`` yields it: a list that also keeps its ``items``.

    >>> c = DataChunk([1, 2])
    >>> c, c.as_str('  ')
    ([1, 2], '  [1, 2]')
    """

    def __init__(self, items: Iterable):
        items = list(items)
        super().__init__(items)
        self.items = items

    def as_str(self, indent=''):
        return indent + "[" + ", ".join(str(i) for i in iter(self)) + "]"

    def __iter__(self):
        yield from super().__iter__()

    def raw_iterator(self):
        yield from self.items


def _functional_form(registry, datapipe, name):
    f = registry[name]
    function = functools.partial(f, datapipe)
    functools.update_wrapper(wrapper=function, wrapped=f, assigned=("__doc__",))
    return function


def _register(registry, function_name, cls_to_register):
    if function_name in registry:
        raise Exception(f"Unable to add DataPipe function name {function_name} as it is already taken")
    function = functools.partial(_construct, cls_to_register)
    functools.update_wrapper(wrapper=function, wrapped=cls_to_register, assigned=("__doc__",))
    registry[function_name] = function


def _construct(cls, source_dp, *args, **kwargs):
    return cls(source_dp, *args, **kwargs)


class _DataPipeBase:
    """What both kinds share: hooks for pickling, the name-only repr, and the functional names in ``dir``."""
    reduce_ex_hook: Optional[Callable] = None
    getstate_hook: Optional[Callable] = None
    str_hook: Optional[Callable] = None
    repr_hook: Optional[Callable] = None

    def __getattr__(self, attribute_name):
        kind = self._kind()
        if attribute_name in kind.functions:
            return _functional_form(kind.functions, self, attribute_name)
        raise AttributeError(f"'{self.__class__.__name__}' object has no attribute '{attribute_name}")

    @classmethod
    def register_function(cls, function_name, function):
        cls._kind().functions[function_name] = function

    def __getstate__(self):
        state = self.__dict__
        hook = self._kind().getstate_hook
        return hook(state) if hook is not None else state

    def __reduce_ex__(self, *args, **kwargs):
        hook = self._kind().reduce_ex_hook
        if hook is not None:
            try:
                return hook(self)
            except NotImplementedError:
                pass
        return super().__reduce_ex__(*args, **kwargs)

    @classmethod
    def set_getstate_hook(cls, hook_fn):
        cls._set_hook('getstate_hook', hook_fn)

    @classmethod
    def set_reduce_ex_hook(cls, hook_fn):
        cls._set_hook('reduce_ex_hook', hook_fn)

    @classmethod
    def _set_hook(cls, name, hook_fn):
        kind = cls._kind()
        if getattr(kind, name) is not None and hook_fn is not None:
            raise RuntimeError(f"Attempt to override existing {name}")
        setattr(kind, name, hook_fn)

    def __repr__(self):
        return self.repr_hook(self) if self.repr_hook is not None else str(self.__class__.__qualname__)

    def __str__(self):
        return self.str_hook(self) if self.str_hook is not None else str(self.__class__.__qualname__)

    def __dir__(self):
        return list(super().__dir__()) + list(self.functions.keys())


class IterDataPipe(_DataPipeBase, IterableDataset[_T_co], metaclass=_IterDataPipeMeta):
    """An iterable-style DataPipe: subclasses define ``__iter__`` (and ``reset()`` if they keep state).

    Creating an iterator calls ``reset()``; only the newest iterator of a DataPipe may be read.

    >>> from ember.utils.data.datapipes.iter import IterableWrapper
    >>> dp = IterableWrapper(range(-3, 3)).map(abs).filter(bool)
    >>> list(dp)
    [3, 2, 1, 1, 2]
    >>> list(IterableWrapper(range(5)).batch(2))
    [[0, 1], [2, 3], [4]]
    """
    functions: dict = {}
    _valid_iterator_id: Optional[int] = None
    _number_of_samples_yielded: int = 0

    @staticmethod
    def _kind():
        return IterDataPipe

    def __iter__(self) -> Iterator[_T_co]:
        return self

    @classmethod
    def register_datapipe_as_function(cls, function_name, cls_to_register, enable_df_api_tracing=False):
        _register(IterDataPipe.functions, function_name, cls_to_register)

    def reset(self) -> None:
        """Bring the DataPipe back to its initial state; called whenever a new iterator is created."""


class DFIterDataPipe(IterDataPipe):
    """torch's marker class for DataFrame pipelines (ember has no DataFrame tracing)."""

    def _is_dfpipe(self):
        return True


class MapDataPipe(_DataPipeBase, Dataset[_T_co], metaclass=_DataPipeMeta):
    """A map-style DataPipe: subclasses define ``__getitem__`` (and usually ``__len__``).

    >>> from ember.utils.data.datapipes.map import SequenceWrapper
    >>> dp = SequenceWrapper(range(4)).map(str)
    >>> list(dp), dp[2]
    (['0', '1', '2', '3'], '2')
    """
    functions: dict = {}

    @staticmethod
    def _kind():
        return MapDataPipe

    @classmethod
    def register_datapipe_as_function(cls, function_name, cls_to_register):
        _register(MapDataPipe.functions, function_name, cls_to_register)


class _DataPipeSerializationWrapper:
    """What the DataLoader holds for a DataPipe: pickles it (with dill when plain pickle fails)."""

    def __init__(self, datapipe):
        self._datapipe = datapipe

    def __getstate__(self):
        try:
            return pickle.dumps(self._datapipe), False
        except Exception:
            from .utils.common import dill_available
            if not dill_available():
                raise
            import dill
            return dill.dumps(self._datapipe), True

    def __setstate__(self, state):
        value, use_dill = state
        if use_dill:
            import dill
            self._datapipe = dill.loads(value)
        else:
            self._datapipe = pickle.loads(value)

    def __len__(self):
        try:
            return len(self._datapipe)
        except Exception as e:
            raise TypeError(f"{type(self).__name__} instance doesn't have valid length") from e


class _IterDataPipeSerializationWrapper(_DataPipeSerializationWrapper, IterDataPipe):
    def __init__(self, datapipe):
        super().__init__(datapipe)
        self._datapipe_iter = None

    def __iter__(self):
        self._datapipe_iter = iter(self._datapipe)
        return self

    def __next__(self):
        if self._datapipe_iter is None:
            raise AssertionError("Iterator has not been initialized; call __iter__() before __next__()")
        return next(self._datapipe_iter)


class _MapDataPipeSerializationWrapper(_DataPipeSerializationWrapper, MapDataPipe):
    def __getitem__(self, idx):
        return self._datapipe[idx]
