"""ember._dynamo.config: settings of capture (torch._dynamo.config's names).

``cache_size_limit``: how many compiled versions (one per distinct guard set: shapes, dtypes, grad mode,
training flags...) a function keeps before it warns and runs eagerly.
``suppress_errors``: when a backend fails to compile, run eagerly instead of raising.
``patch(name, value)`` or ``patch(name=value, ...)``: the settings changed inside a ``with`` block or a decorated
function, restored after.
"""
import contextlib
import sys

from .._core import naming
cache_size_limit = 8
recompile_limit = cache_size_limit
suppress_errors = False

# calls that run eagerly before the first capture (ember's own setting, NOTE [capture and guards]). Python state a
# function creates lazily on its first call (an optimizer's momentum buffers) must be made by real code, not by the
# trace, which runs on fake tensors: when a trace stores a fake tensor in such state, ember restores the state,
# runs that call eagerly and captures on the next one, so 0 is safe for optimizers; raise it for other lazy state
warmup_calls = 0


class _Patch(contextlib.ContextDecorator):
    def __init__(self, changes):
        self.changes, self.saved = changes, []

    def __enter__(self):
        module = sys.modules[__name__]
        for name in self.changes:
            if name.startswith('_') or not hasattr(module, name) or callable(getattr(module, name)):
                raise AttributeError(f"{naming.shown}._dynamo.config.{name} does not exist")
        self.saved.append({name: getattr(module, name) for name in self.changes})
        for name, value in self.changes.items():
            setattr(module, name, value)

    def __exit__(self, *exc):
        for name, value in self.saved.pop().items():
            setattr(sys.modules[__name__], name, value)
        return False


def patch(arg1=None, arg2=None, **changes):
    """``with config.patch(cache_size_limit=4):`` or ``@config.patch('suppress_errors', True)``: torch's
    ConfigModule.patch, the settings set for the block or the call and restored after.

    >>> from ember._dynamo import config
    >>> with config.patch(cache_size_limit=3):
    ...     config.cache_size_limit
    3
    """
    if isinstance(arg1, str):
        changes = {arg1: arg2, **changes}
    elif isinstance(arg1, dict):
        changes = {**arg1, **changes}
    return _Patch(changes)
