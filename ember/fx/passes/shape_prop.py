"""ShapeProp: run a GraphModule and record every value's tensor metadata (torch.fx.passes.shape_prop).

Each node gets ``node.meta['tensor_meta']`` (a TensorMetadata, or the same structure as the value with
TensorMetadata in place of its tensors) and ``node.meta['type']``. Running on meta tensors (the module and
the inputs on ``device='meta'``) gives the metadata without computing anything.
"""
from typing import NamedTuple

import ember

from ..interpreter import Interpreter
from ..node import map_aggregate

__all__ = ['TensorMetadata', 'ShapeProp']


class TensorMetadata(NamedTuple):
    shape: object
    dtype: object
    requires_grad: bool
    stride: tuple
    memory_format: object
    is_quantized: bool
    qparams: dict


_MEMORY_FORMATS = ('contiguous_format', 'channels_last', 'channels_last_3d')
_DIM_ORDER = {'channels_last': (1, 3, 2, 0), 'channels_last_3d': (1, 4, 3, 2, 0)}   # innermost dimension first


def _is_contiguous_as(t, fmt):
    """Whether ``t``'s strides are those of memory format ``fmt``, computed from its sizes and strides (a
    channels-last layout is only defined for 4-d and 5-d tensors)."""
    if fmt == 'contiguous_format':
        return t.is_contiguous()
    order = _DIM_ORDER[fmt]
    if t.dim() != len(order):
        return False
    expected, size, stride = 1, t.shape, t.stride()
    for d in order:
        if size[d] != 1:
            if stride[d] != expected:
                return False
            expected *= size[d]
    return True


def _extract_tensor_metadata(result, include_contiguity=True):
    memory_format = None
    if include_contiguity:
        for fmt in _MEMORY_FORMATS:
            if _is_contiguous_as(result, fmt):
                memory_format = getattr(ember, fmt, fmt)
                break
    stride = () if getattr(result, 'is_sparse', False) else result.stride()
    return TensorMetadata(result.shape, result.dtype, result.requires_grad, stride, memory_format,
                          bool(getattr(result, 'is_quantized', False)), {})


class ShapeProp(Interpreter):
    """Fills ``node.meta['tensor_meta']`` for every node while running the module on example inputs.

    >>> import ember, ember.fx as fx
    >>> from ember.fx.passes.shape_prop import ShapeProp
    >>> gm = fx.symbolic_trace(ember.nn.Linear(4, 3))
    >>> _ = ShapeProp(gm).propagate(ember.randn(2, 4))
    >>> [(n.name, tuple(n.meta['tensor_meta'].shape)) for n in gm.graph.nodes]
    [('input_1', (2, 4)), ('weight', (3, 4)), ('bias', (3,)), ('linear', (2, 3)), ('output', (2, 3))]
    """

    def __init__(self, gm, fake_mode=None):
        super().__init__(gm)
        if fake_mode is not None:
            raise NotImplementedError('ember has no fake tensor mode: run ShapeProp on meta tensors (the module '
                                      "and the inputs on device='meta') instead")
        self.fake_mode = None

    def run_node(self, n):
        try:
            result = super().run_node(n)
        except Exception as e:
            raise RuntimeError(f'ShapeProp error for: node={n.format_node()} with meta={n.meta}') from e
        found = []

        def meta_of(obj):
            if isinstance(obj, ember.Tensor):
                found.append(True)
                return _extract_tensor_metadata(obj)
            return obj
        meta = map_aggregate(result, meta_of)
        if found:
            n.meta['tensor_meta'] = meta
        n.meta['type'] = type(result)
        return result

    def propagate(self, *args):
        """Run the module on ``args``, recording the metadata; returns the module's result."""
        return super().run(*args)
