"""torch.distributed.rpc.api: the RPC calls and the remote reference type.

ember has no RPC agent (``rpc.is_available()`` is False), so these behave as torch's do before ``init_rpc``: the
calls raise torch's "not initialized" error and an ``RRef`` cannot be made. The names exist because programs test
against them whether or not they use RPC: ``isinstance(logits, torch.distributed.rpc.api.RRef)`` in a training
helper's loop must be False for a tensor, not an AttributeError.

>>> import ember
>>> from ember.distributed.rpc.api import RRef
>>> isinstance(ember.ones(2), RRef)
False
"""
from typing import Generic, TypeVar

T = TypeVar('T')
_NOT_INITIALIZED = "RPC has not been initialized. Call torch.distributed.rpc.init_rpc first."


class RRef(Generic[T]):
    """A reference to a value owned by an RPC worker; needs an RPC agent, which ember has not."""

    def __init__(self, value, type_hint=None):
        raise RuntimeError("Current RPC agent is not set! Did you initialize the RPC framework (e.g. by calling "
                           "`rpc.init_rpc`)?")


def _not_initialized(*args, **kwargs):
    raise RuntimeError(_NOT_INITIALIZED)


def _is_current_rpc_agent_set():
    """Whether an RPC agent runs in this process: never in ember."""
    return False


def _require_initialized(func):
    """torch's decorator for calls that need an agent (PyG's distributed helpers wrap theirs with it at import):
    the wrapped call raises torch's error while no agent runs."""
    import functools

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        if not _is_current_rpc_agent_set():
            raise RuntimeError(_NOT_INITIALIZED)
        return func(*args, **kwargs)
    return wrapper


@_require_initialized
def _all_gather(obj, worker_names=None, timeout=-1.0):
    """Gather ``obj`` from every worker: torch's error, since no agent runs."""


def rpc_sync(to, func, args=None, kwargs=None, timeout=-1.0):
    """Run ``func`` on worker ``to`` and wait: torch's error, since no agent runs."""
    _not_initialized()


def rpc_async(to, func, args=None, kwargs=None, timeout=-1.0):
    """Run ``func`` on worker ``to`` (a Future): torch's error, since no agent runs."""
    _not_initialized()


def remote(to, func, args=None, kwargs=None, timeout=-1.0):
    """Run ``func`` on worker ``to`` (an RRef to its result): torch's error, since no agent runs."""
    _not_initialized()


def get_worker_info(worker_name=None):
    """This or another worker's name and id: torch's error, since no agent runs."""
    _not_initialized()


def shutdown(graceful=True, timeout=0):
    """Stop the RPC agent: torch's error, since none was started."""
    _not_initialized()
