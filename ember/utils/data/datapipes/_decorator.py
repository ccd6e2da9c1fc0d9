"""Decorators for DataPipe classes (torch's ``datapipes._decorator``).

``functional_datapipe(name)`` registers a class under a method name of its kind
(``IterDataPipe`` or ``MapDataPipe``); ``non_deterministic`` marks classes that
``guaranteed_datapipes_determinism`` then refuses to build.
"""
import inspect
from functools import wraps
from typing import get_type_hints

from ._typing import _DataPipeMeta
from .datapipe import IterDataPipe, MapDataPipe

__all__ = ['argument_validation', 'functional_datapipe', 'guaranteed_datapipes_determinism', 'non_deterministic',
           'runtime_validation', 'runtime_validation_disabled']


class functional_datapipe:
    """Register a DataPipe class as a method of every DataPipe of its kind.

    >>> from ember.utils.data.datapipes.datapipe import IterDataPipe
    >>> from ember.utils.data.datapipes.iter import IterableWrapper
    >>> @functional_datapipe('doc_example_twice')
    ... class Twice(IterDataPipe):
    ...     def __init__(self, dp): self.dp = dp
    ...     def __iter__(self):
    ...         for x in self.dp: yield from (x, x)
    >>> list(IterableWrapper([1, 2]).doc_example_twice())
    [1, 1, 2, 2]
    """

    def __init__(self, name, enable_df_api_tracing=False):
        self.name = name
        self.enable_df_api_tracing = enable_df_api_tracing

    def __call__(self, cls):
        if issubclass(cls, IterDataPipe):
            if not _is_iter_datapipe_class(cls):
                raise TypeError("`functional_datapipe` can only decorate IterDataPipe")
            IterDataPipe.register_datapipe_as_function(self.name, cls,
                                                       enable_df_api_tracing=self.enable_df_api_tracing)
        elif issubclass(cls, MapDataPipe):
            MapDataPipe.register_datapipe_as_function(self.name, cls)
        return cls


def _is_iter_datapipe_class(cls):
    if isinstance(cls, type):
        return isinstance(cls, _DataPipeMeta)
    return isinstance(cls, non_deterministic) or isinstance(getattr(cls, '__self__', None), non_deterministic)


_determinism = [False]   # one flag, set only by guaranteed_datapipes_determinism


class guaranteed_datapipes_determinism:
    """While active (from construction to ``__exit__``), building a non-deterministic DataPipe raises TypeError."""

    def __init__(self):
        self.prev = _determinism[0]
        _determinism[0] = True

    def __enter__(self):
        pass

    def __exit__(self, exc_type, exc_value, traceback):
        _determinism[0] = self.prev


class non_deterministic:
    """Mark an IterDataPipe class (or, given a function of the arguments, some of its instances) non-deterministic."""
    cls = None

    def __init__(self, arg):
        if isinstance(arg, type):
            if not issubclass(arg, IterDataPipe):
                raise TypeError(f"Only `IterDataPipe` can be decorated with `non_deterministic`, "
                                f"but {arg.__name__} is found")
            self.cls = arg
        elif callable(arg):
            self.deterministic_fn = arg
        else:
            raise TypeError(f"{arg} can not be decorated by non_deterministic")

    def __call__(self, *args, **kwargs):
        if self.cls is not None:
            if _determinism[0]:
                raise TypeError(f"{self.cls.__name__} is non-deterministic, but you set "
                                "'guaranteed_datapipes_determinism'. You can turn off determinism for this "
                                "DataPipe if that is acceptable for your application")
            return self.cls(*args, **kwargs)
        if not (isinstance(args[0], type) and issubclass(args[0], IterDataPipe)):
            raise TypeError(f"Only `IterDataPipe` can be decorated, but {args[0].__name__} is found")
        self.cls = args[0]
        return self.deterministic_wrapper_fn

    def deterministic_wrapper_fn(self, *args, **kwargs):
        res = self.deterministic_fn(*args, **kwargs)
        if not isinstance(res, bool):
            raise TypeError("deterministic_fn of `non_deterministic` decorator is required to return a boolean "
                            f"value, but {type(res)} is found")
        if _determinism[0] and res:
            raise TypeError(f"{self.cls.__name__} is non-deterministic with the inputs, but you set "
                            "'guaranteed_datapipes_determinism'. You can turn off determinism for this DataPipe "
                            "if that is acceptable for your application")
        return self.cls(*args, **kwargs)


def argument_validation(f):
    """Check that arguments annotated with a DataPipe class are IterDataPipes (and of the annotated type).

    As in torch, DataPipes carry no ``type`` attribute (torch's DataPipe type system is disabled), so
    a DataPipe argument reaching the type comparison raises AttributeError there as it does here.
    """
    signature = inspect.signature(f)
    hints = get_type_hints(f)

    @wraps(f)
    def wrapper(*args, **kwargs):
        for name, value in signature.bind(*args, **kwargs).arguments.items():
            hint = hints.get(name)
            if isinstance(hint, _DataPipeMeta):
                if not isinstance(value, IterDataPipe):
                    raise TypeError(f"Expected argument '{name}' as a IterDataPipe, but found {type(value)}")
                if not value.type.issubtype(hint.type):
                    raise TypeError(f"Expected type of argument '{name}' as a subtype of hint {hint.type}, "
                                    f"but found {value.type}")
        return f(*args, **kwargs)
    return wrapper


_runtime_validation_enabled = [True]


class runtime_validation_disabled:
    """Turn ``runtime_validation`` checks off from construction until ``__exit__``."""

    def __init__(self):
        self.prev = _runtime_validation_enabled[0]
        _runtime_validation_enabled[0] = False

    def __enter__(self):
        pass

    def __exit__(self, exc_type, exc_value, traceback):
        _runtime_validation_enabled[0] = self.prev


def runtime_validation(f):
    """Decorate an ``__iter__`` so each item is checked against the DataPipe's type (see ``argument_validation``)."""
    if f.__name__ != '__iter__':
        raise TypeError(f"Can not decorate function {f.__name__} with 'runtime_validation'")

    @wraps(f)
    def wrapper(self):
        if not _runtime_validation_enabled[0]:
            yield from f(self)
            return
        for d in f(self):
            if not self.type.issubtype_of_instance(d):
                raise RuntimeError(f"Expected an instance as subtype of {self.type}, but found {d}({type(d)})")
            yield d
    return wrapper
