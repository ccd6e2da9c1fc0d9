"""torch's Python-level checks and SymInt-aware helpers: ``_check`` and its variants (each raising torch's error
class: TORCH_CHECK's RuntimeError, TORCH_CHECK_INDEX's IndexError, ...), ``_check_tensor_all``, ``_assert_async``,
``sym_int``/``sym_float``/``sym_max``/``sym_min``/``sym_not``/``sym_ite``, ``_shape_as_tensor`` and the legacy
``_cast_<Type>`` conversions. ember's SymInt is an ``int`` (NOTE [symbolic sizes]), so the helpers treat it as one:
a comparison it takes part in is recorded as a guard."""
import builtins
from numbers import Integral, Real

from ember._warn import warnings

from .._core import dtype as D
from .._tensor import Tensor

__all__ = ['_check', '_check_with', '_check_index', '_check_value', '_check_type', '_check_not_implemented',
           '_check_is_size', '_check_tensor_all', '_check_tensor_all_with', '_assert_async', 'sym_int', 'sym_float',
           'sym_max', 'sym_min', 'sym_not', 'sym_ite', '_shape_as_tensor', '_cast_Byte', '_cast_Char',
           '_cast_Double', '_cast_Float', '_cast_Half', '_cast_Int', '_cast_Long', '_cast_Short']


def _sym(name):
    from ..fx.experimental import symbolic_shapes
    return getattr(symbolic_shapes, name)


def _check_with(error_type, cond, message):
    """Raise ``error_type(message())`` when ``cond`` (a bool) is False."""
    if not isinstance(cond, (builtins.bool, _sym('SymBool'))):
        if isinstance(cond, Tensor):
            raise TypeError("cond must be a bool, but got a Tensor. For tensor conditions, use "
                            "torch._check_tensor_all() to assert that all elements are true.")
        raise TypeError(f"cond must be a bool, but got {type(cond)}")
    if cond:
        return
    if not issubclass(error_type, Exception) or issubclass(error_type, Warning):
        raise AssertionError(f"error_type must be a subclass of Exception but not Warning, got {error_type}")
    if message is None:
        text = ("Expected cond to be True, but got False. (Could this error message be improved? If so, please "
                "report an enhancement request to PyTorch.)")
    elif not callable(message):
        raise TypeError("message must be a callable")
    else:
        text = str(message())
    raise error_type(text)


def _check(cond, message=None):
    """RuntimeError(``message()``) unless ``cond`` (torch's TORCH_CHECK).

    >>> import ember
    >>> ember._check(2 > 1, lambda: 'never shown')
    """
    _check_with(RuntimeError, cond, message)


def _check_index(cond, message=None):
    _check_with(IndexError, cond, message)


def _check_value(cond, message=None):
    _check_with(ValueError, cond, message)


def _check_type(cond, message=None):
    _check_with(TypeError, cond, message)


def _check_not_implemented(cond, message=None):
    _check_with(NotImplementedError, cond, message)


def _check_is_size(i, message=None, *, max=None):
    """``_check(i >= 0)`` (and ``i <= max``); deprecated in torch, with its FutureWarning."""
    warnings.warn("_check_is_size will be removed in a future PyTorch release along with guard_size_oblivious.     "
                  "Use _check(i >= 0) instead.", FutureWarning, stacklevel=2)
    _check(i >= 0, message)
    if max is not None:
        _check(i <= max, message)


def _check_tensor_all_with(error_type, cond, message=None):
    if not isinstance(cond, Tensor):
        raise TypeError(f"cond must be a tensor, but got {type(cond)}")
    if cond.dtype is not D.bool_:
        raise TypeError(f"cond tensor must have dtype {D.bool_}, but got {cond.dtype}")
    _check_with(error_type, bool(cond.all().item()), message)


def _check_tensor_all(cond, message=None):
    _check_tensor_all_with(RuntimeError, cond, message)


def _assert_async(tensor, assert_msg=None):
    """RuntimeError unless the one-element ``tensor`` is nonzero (torch checks without waiting on a device)."""
    if not tensor:
        raise RuntimeError(assert_msg if assert_msg is not None else
                           "Expected Tensor with single nonzero value, but got zero")


def sym_int(a):
    if isinstance(a, _sym('SymInt')):
        return a
    return builtins.int(a)


def sym_float(a):
    if hasattr(a, '__sym_float__'):
        return a.__sym_float__()
    return builtins.float(a)


def _max_or_min(pick, a, b):
    for x in (a, b):
        if not isinstance(x, (Integral, Real)) or isinstance(x, Tensor):
            raise AssertionError(f"expected (<class 'numpy.integer'>, <class 'numpy.floating'>, <class 'int'>, "
                                 f"<class 'float'>), got {type(x)}")
    if isinstance(a, float) or isinstance(b, float) or not (isinstance(a, Integral) and isinstance(b, Integral)):
        return builtins.float(pick(a, b))
    return pick(a, b)


def sym_max(a, b):
    """``max`` that promotes to float when either argument is a float (torch.sym_max)."""
    return _max_or_min(builtins.max, a, b)


def sym_min(a, b):
    return _max_or_min(builtins.min, a, b)


def sym_not(a):
    if hasattr(a, '__sym_not__'):
        return a.__sym_not__()
    return not a


def sym_ite(b, t, f):
    """``t if b else f`` (torch.sym_ite)."""
    if not isinstance(b, (builtins.bool, _sym('SymBool'))):
        raise AssertionError(f"expected SymBool or bool, got {type(b)}")
    if type(t) is not type(f):
        raise AssertionError(f"type mismatch: {type(t)} vs {type(f)}")
    return t if b else f


def _shape_as_tensor(input):
    """``input``'s sizes as an int64 tensor."""
    import ember
    return ember.tensor(tuple(input.shape), dtype=D.int64)


def _caster(name, dt):
    def cast(self, non_blocking=False):
        return self.to(dt, non_blocking=non_blocking)
    cast.__name__ = cast.__qualname__ = name
    cast.__doc__ = f"``self.to({dt})`` (torch's legacy {name})."
    return cast


_cast_Byte, _cast_Char, _cast_Double, _cast_Float, _cast_Half, _cast_Int, _cast_Long, _cast_Short = (
    _caster(f'_cast_{n}', d) for n, d in (('Byte', D.uint8), ('Char', D.int8), ('Double', D.float64),
                                          ('Float', D.float32), ('Half', D.float16), ('Int', D.int32),
                                          ('Long', D.int64), ('Short', D.int16)))
