"""torch.distributed.autograd: autograd across RPC calls (a backward pass that follows tensors sent to other
workers). It is built on RPC, which ember has not (``ember.distributed.rpc.is_available()`` is False), so, as on
a torch build without RPC, ``is_available()`` is False and entering a ``context`` or calling ``backward`` raises.

>>> is_available()
False
"""

__all__ = ['is_available', 'context', 'backward', 'get_gradients']

_WHY = ("ember has no distributed autograd: it needs torch.distributed.rpc, which ember does not have "
        "(ember.distributed.rpc.is_available() is False)")


def is_available():
    return False


class context:
    """``with context() as context_id:``: the distributed autograd context of a forward and backward pass."""

    def __enter__(self):
        raise RuntimeError(_WHY)

    def __exit__(self, type, value, traceback):
        return False


def backward(context_id, roots, retain_graph=False):
    raise RuntimeError(_WHY)


def get_gradients(context_id):
    raise RuntimeError(_WHY)
