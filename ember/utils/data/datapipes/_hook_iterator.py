"""The single-iterator rule of IterDataPipes (torch's ``_hook_iterator``).

The metaclass of ``IterDataPipe`` wraps every ``__iter__`` a class defines: creating an
iterator calls ``reset()`` and makes that iterator the only valid one; reading from an
older iterator raises. Exceptions raised inside a generator ``__iter__`` get a line naming
the DataPipe that raised, as torch's do. (torch also records a profiler range per item;
ember does not.)
"""
import functools
import inspect

_FEEDBACK = ("\nFor feedback regarding this single iterator per IterDataPipe constraint, feel free "
             "to comment on this issue: https://github.com/pytorch/data/issues/45.")


def _simplify_obj_name(obj):
    return obj.__name__ if inspect.isfunction(obj) else repr(obj)


def _generate_input_args_string(obj):
    """``name=value, ...`` for the constructor arguments the DataPipe keeps as attributes, sorted by name."""
    params = set(inspect.signature(obj.__class__).parameters)
    pairs = [(n, _simplify_obj_name(v)) for n, v in inspect.getmembers(obj) if n in params]
    return ", ".join(f"{n}={v}" for n, v in pairs)


def _invalid_iterator_msg(datapipe):
    return ("This iterator has been invalidated because another iterator has been created from the same "
            f"IterDataPipe: {datapipe.__class__.__name__}({_generate_input_args_string(datapipe)})\n"
            "This may be caused by multiple references to the same IterDataPipe. We recommend using `.fork()` "
            "if that is necessary." + _FEEDBACK)


def _check_iterator_valid(datapipe, iterator_id):
    if datapipe._valid_iterator_id != iterator_id:
        raise RuntimeError(_invalid_iterator_msg(datapipe))


def _set_datapipe_valid_iterator_id(datapipe):
    """A new iterator: it becomes the valid one, and the DataPipe is reset."""
    last = datapipe._valid_iterator_id
    datapipe._valid_iterator_id = 0 if last is None else last + 1
    datapipe._number_of_samples_yielded = 0
    datapipe.reset()
    return datapipe._valid_iterator_id


def _annotate(e, datapipe):
    """Add torch's 'This exception is thrown by __iter__ of ...' line to an exception's message."""
    where = f"thrown by __iter__ of {datapipe.__class__.__name__}({_generate_input_args_string(datapipe)})"
    if not e.args or not isinstance(e.args[0], str):
        e.args = (f"\nThis exception is {where}",)
    elif "thrown by __iter__ of" not in e.args[0] and "single iterator per IterDataPipe constraint" not in e.args[0]:
        e.args = (e.args[0] + f"\nThis exception is {where}",) + e.args[1:]


def _wrap_generator(func):
    @functools.wraps(func)
    def wrapper(datapipe, *args, **kwargs):
        gen = func(datapipe, *args, **kwargs)
        iterator_id = _set_datapipe_valid_iterator_id(datapipe)   # on the first next(), as torch's
        try:
            response = gen.send(None)
            while True:
                datapipe._number_of_samples_yielded += 1
                request = yield response
                _check_iterator_valid(datapipe, iterator_id)
                response = gen.send(request)
        except StopIteration:
            return
        except Exception as e:
            _annotate(e, datapipe)
            raise
    return wrapper


class _IteratorDecorator:
    """The iterator returned by a non-generator ``__iter__``, checked for validity on each ``next``."""

    def __init__(self, iterator, datapipe, iterator_id, has_next_method):
        self.iterator, self.datapipe, self.iterator_id = iterator, datapipe, iterator_id
        self.self_and_has_next_method = iterator is datapipe and has_next_method

    def __iter__(self):
        return self

    def __next__(self):
        _check_iterator_valid(self.datapipe, self.iterator_id)
        result = next(self.iterator)
        if not self.self_and_has_next_method:
            self.datapipe._number_of_samples_yielded += 1
        return result

    def __getattr__(self, name):
        return getattr(self.iterator, name)


def _wrap_iter(func, has_next_method):
    @functools.wraps(func)
    def wrapper(datapipe, *args, **kwargs):
        it = func(datapipe, *args, **kwargs)
        return _IteratorDecorator(it, datapipe, _set_datapipe_valid_iterator_id(datapipe), has_next_method)
    return wrapper


def _wrap_next(func):
    @functools.wraps(func)
    def wrapper(datapipe, *args, **kwargs):
        result = func(datapipe, *args, **kwargs)
        datapipe._number_of_samples_yielded += 1
        return result
    return wrapper


def hook_iterator(namespace):
    """Wrap the ``__iter__`` (and ``__next__``) of a class body being created by the IterDataPipe metaclass."""
    func = namespace['__iter__']
    if inspect.isgeneratorfunction(func):
        namespace['__iter__'] = _wrap_generator(func)
        return
    if '__next__' in namespace:
        namespace['__next__'] = _wrap_next(namespace['__next__'])
    namespace['__iter__'] = _wrap_iter(func, '__next__' in namespace)
