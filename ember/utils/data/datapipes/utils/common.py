"""Checks shared by the DataPipes that take a function (torch's ``datapipes.utils.common``)."""
import functools
import importlib.util
import inspect
from ember._warn import warnings

__all__ = ['validate_input_col']


def dill_available():
    """Whether ``dill`` can be imported (torch then pickles lambdas in DataPipes with it)."""
    return importlib.util.find_spec('dill') is not None


def _positional_shape(sig):
    pos, var_positional, kw_only_required = [], False, []
    for p in sig.parameters.values():
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            pos.append(p)
        elif p.kind is p.VAR_POSITIONAL:
            var_positional = True
        elif p.kind is p.KEYWORD_ONLY and p.default is p.empty:
            kw_only_required.append(p)
    return pos, var_positional, kw_only_required


def validate_input_col(fn, input_col):
    """Raise ValueError when ``fn`` cannot take as many positional arguments as ``input_col`` names.

    >>> validate_input_col(lambda a, b: a + b, [0, 1])
    >>> validate_input_col(lambda a: a, [0, 1])
    Traceback (most recent call last):
        ...
    ValueError: The function <lambda> takes 1 parameters, but 2 are required.
    """
    try:
        sig = inspect.signature(fn)
    except ValueError:   # a builtin without a signature: nothing to check
        return
    size = len(input_col) if isinstance(input_col, (list, tuple)) else 1
    pos, var_positional, kw_only_required = _positional_shape(sig)
    func = fn.func if isinstance(fn, functools.partial) else fn
    name = getattr(func, '__name__', repr(func))
    if kw_only_required:
        raise ValueError(f"The function {name} takes {len(kw_only_required)} non-default keyword-only parameters, "
                         "which is not allowed.")
    if len(sig.parameters) < size:
        if not var_positional:
            raise ValueError(f"The function {name} takes {len(sig.parameters)} parameters, but {size} are required.")
    elif (len(pos) > size and any(p.default is p.empty for p in pos[size:])) or \
            (len(pos) < size and not var_positional):
        raise ValueError(f"The function {name} takes {len(pos)} positional parameters, but {size} are required.")


def _is_local_fn(fn):
    if hasattr(fn, '__code__'):
        return fn.__code__.co_flags & inspect.CO_NESTED
    qualname = getattr(fn, '__qualname__', None) or getattr(type(fn), '__qualname__', '')
    return '<locals>' in qualname


def _check_unpickable_fn(fn):
    """TypeError for a non-callable; a UserWarning for a lambda or local function when dill is absent."""
    if not callable(fn):
        raise TypeError(f"A callable function is expected, but {type(fn)} is provided.")
    if isinstance(fn, functools.partial):
        fn = fn.func
    if dill_available():
        return
    if _is_local_fn(fn) or getattr(fn, '__name__', None) == '<lambda>':
        warnings.warn("Local function is not supported by pickle, please use regular python function or "
                      "functools.partial instead." if _is_local_fn(fn) else
                      "Lambda function is not supported by pickle, please use regular python function or "
                      "functools.partial instead.", stacklevel=3)
