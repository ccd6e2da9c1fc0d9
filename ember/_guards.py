"""``torch._guards``: what the tracing machinery shares about the trace in progress. ember's has the lookup
libraries use to find the fake mode a program is being traced under (nnsight's meta-device model loading)."""

__all__ = ['detect_fake_mode']


def detect_fake_mode(inputs=None):
    """The FakeTensorMode in force: the innermost one on the dispatch-mode stack, else the one that made a fake
    tensor among ``inputs`` (any nesting of lists, tuples and dicts), else None."""
    from ._subclasses.fake_tensor import FakeTensorMode, mode_of
    from .utils._python_dispatch import _get_current_dispatch_mode_stack
    from .utils._pytree import tree_leaves
    for mode in reversed(_get_current_dispatch_mode_stack()):
        if isinstance(mode, FakeTensorMode):
            return mode
    for leaf in tree_leaves(inputs):
        mode = mode_of(leaf)
        if mode is not None:
            return mode
    return None
