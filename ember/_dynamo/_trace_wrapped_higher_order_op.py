"""torch._dynamo._trace_wrapped_higher_order_op: ``TransformGetItemToIndex``, the torch function mode under which
``tensor[idx_tensor]`` inside a flex-attention score/mask function is written as ``aten.index`` (so a compiler can
trace it). Indexing is the same operation either way; ember's ``Tensor.__getitem__`` already dispatches
``aten::index`` for tensor indices, so the mode passes every call through."""
from ..overrides import TorchFunctionMode


class TransformGetItemToIndex(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))
