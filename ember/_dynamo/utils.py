"""ember._dynamo.utils: the helpers of torch._dynamo.utils that libraries call.

>>> import sys
>>> from ember._dynamo import config, utils
>>> with utils.disable_cache_limit():
...     config.cache_size_limit == sys.maxsize
True
"""
import contextlib
import sys
import warnings

from . import config

__all__ = ['disable_cache_limit', 'warn_once']

warn_once_cache = set()


@contextlib.contextmanager
def disable_cache_limit():
    """Inside the block a function compiles as many versions as it meets (no ``cache_size_limit``); the limits
    come back after."""
    saved = {name: getattr(config, name) for name in ('cache_size_limit', 'recompile_limit',
                                                      'accumulated_recompile_limit') if hasattr(config, name)}
    for name in saved:
        setattr(config, name, sys.maxsize)
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(config, name, value)


def warn_once(msg, stacklevel=1):
    """Warn with ``msg`` the first time only: torch's workaround for compiled code re-raising every warning each
    call. The cache is of the messages, as ``warnings`` keeps.

    >>> warn_once('slow path taken')     # doctest: +SKIP
    """
    if msg in warn_once_cache:
        return
    warn_once_cache.add(msg)
    warnings.warn(msg, stacklevel=stacklevel + 1)
