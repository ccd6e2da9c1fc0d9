"""``ember.ops.<namespace>.<name>[.<overload>]``: every registered operator, as torch.ops.

>>> import ember
>>> ember.ops.aten.add.Tensor(ember.ones(2), ember.ones(2))
tensor([2., 2.])
"""
from ._dispatch.ops_namespace import OpOverloadPacket, namespace, forget as _forget  # noqa: F401


def __getattr__(ns):
    if ns.startswith('__'):
        raise AttributeError(ns)
    return namespace(ns)
