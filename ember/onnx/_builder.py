"""The ONNX graph under construction: value names, initializers, nodes, and the helpers translations share.

A translation (``_translations.py``) receives the exported node's arguments with every tensor replaced by a
``Value`` (its ONNX name, and the shape and dtype of the example) and emits ONNX nodes through ``Builder.op``.
Shape-like arguments go through ``Builder.ints``, which makes a constant, or, where ``dynamic_axes`` made a
size depend on an input's dimension (a ``SymInt``), computes it from ``Shape`` of that input.
"""
import numpy as np

_DTYPES = {'float32': 1, 'uint8': 2, 'int8': 3, 'int16': 5, 'int32': 6, 'int64': 7, 'bool': 9, 'float16': 10,
           'float64': 11, 'bfloat16': 16}


def onnx_dtype(dtype):
    """The ONNX TensorProto element type of an ember dtype."""
    from .errors import OnnxExporterError
    name = dtype.name
    if name not in _DTYPES:
        raise OnnxExporterError(f'ONNX export does not support tensors of dtype {dtype}')
    return _DTYPES[name]


def numpy_dtype(dtype):
    name = dtype.name
    return np.dtype('bool' if name == 'bool' else name) if name != 'bfloat16' else np.dtype('float32')


class Value:
    """A tensor of the ONNX graph: its name, and the example's shape and dtype (from the node's meta)."""
    __slots__ = ('name', 'shape', 'dtype')

    def __init__(self, name, shape, dtype):
        self.name, self.shape, self.dtype = name, tuple(shape), dtype

    @property
    def rank(self):
        return len(self.shape)

    def __repr__(self):
        return f'Value({self.name}, {list(self.shape)}, {self.dtype})'


class SymInt:
    """A size that depends on dynamic input dimensions: ``coeff * prod(dims)``, each dim an (input, axis) pair."""

    def __init__(self, coeff, dims, example):
        self.coeff, self.dims, self.example = coeff, tuple(dims), example

    def __int__(self):
        return self.example

    __index__ = __int__

    def __repr__(self):
        return f'SymInt({self.coeff} * {self.dims})'


class Builder:
    def __init__(self, opset):
        from onnx import helper
        self.helper = helper
        self.opset = opset
        self.nodes = []
        self.initializers = {}        # name -> numpy array
        self._names = set()
        self._consts = {}             # (dtype, bytes, shape) -> name, so that equal constants are one initializer
        self.input_names = {}         # (input name) -> rank, for Shape of dynamic dims

    def fresh(self, hint='v'):
        name, i = hint, 0
        while name in self._names:
            i += 1
            name = f'{hint}_{i}'
        self._names.add(name)
        return name

    def claim(self, name):
        """Reserve ``name`` (an fx node's name) for a value; a clash gets a suffix."""
        return self.fresh(name)

    def initializer(self, name, array):
        self.initializers[name] = np.array(array, order="C")      # (ascontiguousarray makes 0-d arrays 1-d)
        return name

    def const(self, value, dtype=None):
        """A constant tensor (an initializer, shared between equal constants)."""
        arr = np.asarray(value, dtype=dtype)
        key = (arr.dtype.str, arr.shape, arr.tobytes())
        name = self._consts.get(key)
        if name is None:
            name = self._consts[key] = self.initializer(self.fresh('const'), arr)
        return name

    def op(self, op_type, inputs, n_out=1, name=None, **attrs):
        outs = [self.fresh(name or op_type.lower()) for _ in range(n_out)] if not isinstance(name, list) else name
        self.nodes.append(self.helper.make_node(op_type, list(inputs), outs, name=self.fresh(f'n_{outs[0]}'),
                                                **{k: v for k, v in attrs.items() if v is not None}))
        return outs[0] if n_out == 1 else outs

    # --- shapes -----------------------------------------------------------------------------------------
    def sym(self, s):
        """A 1-element int64 tensor holding SymInt ``s``, computed from the inputs' shapes."""
        out = None
        for input_name, axis in s.dims:
            shape = self.op('Shape', [input_name], name='shape')
            d = self.op('Gather', [shape, self.const([axis], np.int64)], name='dim', axis=0)
            out = d if out is None else self.op('Mul', [out, d], name='size')
        if s.coeff != 1:
            out = self.op('Mul', [out, self.const([s.coeff], np.int64)], name='size')
        return out

    def ints(self, values):
        """A 1-d int64 tensor of ``values`` (ints or SymInts): a constant, or a Concat around the symbolic ones."""
        values = list(values)
        if not any(isinstance(v, SymInt) for v in values):
            return self.const([int(v) for v in values], np.int64)
        pieces, run = [], []
        for v in values:
            if isinstance(v, SymInt):
                if run:
                    pieces.append(self.const(run, np.int64))
                    run = []
                pieces.append(self.sym(v))
            else:
                run.append(int(v))
        if run:
            pieces.append(self.const(run, np.int64))
        return self.op('Concat', pieces, name='shape', axis=0) if len(pieces) > 1 else pieces[0]

    def scalar(self, value, dtype):
        """A 0-d constant of ember dtype ``dtype`` (a Python number in a pointwise operator)."""
        return self.const(np.asarray(value).astype(numpy_dtype(dtype)))

    def cast(self, v, dtype):
        """``v`` (a Value) as ember dtype ``dtype`` (a Cast only when it differs)."""
        if v.dtype == dtype:
            return v.name
        return self.op('Cast', [v.name], name='cast', to=onnx_dtype(dtype))
