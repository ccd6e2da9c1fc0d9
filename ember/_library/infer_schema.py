"""torch._library.infer_schema: the operator schema a type-annotated Python function implies (ember/_custom_ops.py).

>>> import ember
>>> from ember._library.infer_schema import infer_schema
>>> def f(x: ember.Tensor, n: int) -> ember.Tensor: ...
>>> infer_schema(f, mutates_args=())
'(Tensor x, SymInt n) -> Tensor'
"""
from .._custom_ops import infer_schema

__all__ = ['infer_schema']
