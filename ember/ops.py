"""``ember.ops.<namespace>.<name>[.<overload>]``: every registered operator, as torch.ops.

>>> import ember
>>> ember.ops.aten.add.Tensor(ember.ones(2), ember.ones(2))
tensor([2., 2.])
"""
from ._dispatch.ops_namespace import OpOverloadPacket, namespace, forget as _forget  # noqa: F401


loaded_libraries = set()


def load_library(path):
    """Load a shared library of C++ operators (torch.ops.load_library). Such libraries register their operators
    into libtorch, which ember does not have, so loading one fails as it does for torch when the library cannot
    be loaded: OSError.
    """
    import ctypes
    path = str(path)
    try:
        ctypes.CDLL(path)
    except OSError:
        raise OSError(f"Could not load this library: {path}") from None
    raise OSError(f"Could not load this library: {path} (it registers C++ operators into libtorch; ember's operators "
                  f"are declared in Python, see ember.library)")


def __getattr__(ns):
    if ns.startswith('__'):
        raise AttributeError(ns)
    return namespace(ns)
