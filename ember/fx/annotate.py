"""torch.fx.annotate: set the type of a traced value."""
from .proxy import Proxy

__all__ = ['annotate']


def annotate(val, type):
    """Give a traced value's Node a type (``x = annotate(x, ember.Tensor)``); outside tracing, ``val`` as it is."""
    if isinstance(val, Proxy):
        if val.node.type is not None:
            raise RuntimeError(f"Tried to annotate a value that already had a type on it! Existing type is "
                               f"{val.node.type} and new type is {type}. This could happen if you tried to "
                               f"annotate a function parameter value (in which case you should use the type "
                               f"slot on the function signature) or you called annotate on the same value twice")
        val.node.type = type
    return val
