"""torch.backends.opt_einsum: whether einsum searches for a cheap contraction order, and how.

torch does the search with the opt_einsum package; ember's einsum kernel asks NumPy's own path search
(``numpy.einsum(optimize=...)``), which is always there, so ``is_available()`` is True. ``enabled = False``
contracts the operands in one unoptimized pass; ``strategy`` ``'optimal'`` tries every order, ``'auto'`` and
``'greedy'`` NumPy's greedy search.

>>> import ember
>>> ember.backends.opt_einsum.is_available(), ember.backends.opt_einsum.enabled, ember.backends.opt_einsum.strategy
(True, True, 'auto')
>>> with ember.backends.opt_einsum.flags(strategy='optimal'):
...     ember.backends.opt_einsum.strategy
'optimal'
"""
import contextlib
import sys
import types

from .._backends.cpu import linalg as _kernels

_STRATEGIES = ('auto', 'greedy', 'optimal')


def is_available():
    """True: NumPy's path search stands in for the opt_einsum package."""
    return True


def get_opt_einsum():
    """The opt_einsum package when it is installed (torch's answer), else None; ember itself does not use it."""
    try:
        import opt_einsum
    except ImportError:
        return None
    return opt_einsum


def _set_enabled(value):
    _kernels.EINSUM_PATH['enabled'] = bool(value)


def _set_strategy(value):
    if not _kernels.EINSUM_PATH['enabled']:
        raise ValueError(f"opt_einsum is not enabled, so setting a `strategy` to {value} will not be meaningful. "
                         "torch.einsum will bypass path calculation and simply contract from left to right. "
                         "Please set `enabled` to `True` as well or unset `strategy`.")
    if value not in _STRATEGIES:
        raise ValueError(f"`strategy` must be one of the following: [auto, greedy, optimal] but is {value}")
    _kernels.EINSUM_PATH['strategy'] = value


def set_flags(_enabled=None, _strategy=None):
    """Set either flag; returns the previous ``(enabled, strategy)``."""
    orig = (_kernels.EINSUM_PATH['enabled'], _kernels.EINSUM_PATH['strategy'])
    if _enabled is not None:
        _set_enabled(_enabled)
    if _strategy is not None:
        _set_strategy(_strategy)
    return orig


@contextlib.contextmanager
def flags(enabled=None, strategy=None):
    """The flags changed inside a ``with`` block, restored after."""
    orig = set_flags(enabled, strategy)
    try:
        yield
    finally:
        _kernels.EINSUM_PATH['enabled'], _kernels.EINSUM_PATH['strategy'] = orig


class _OptEinsumModule(types.ModuleType):
    # ``opt_einsum.strategy = 'x'`` is checked as torch's property module checks it
    enabled = property(lambda self: _kernels.EINSUM_PATH['enabled'], lambda self, v: _set_enabled(v))
    strategy = property(lambda self: _kernels.EINSUM_PATH['strategy'], lambda self, v: _set_strategy(v))


sys.modules[__name__].__class__ = _OptEinsumModule
