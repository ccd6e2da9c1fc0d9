"""safetensors read and write for ember tensors (the ``safetensors`` extra).

Uses the safetensors package's dtype-agnostic ``serialize``/``deserialize`` API
(its NumPy helpers lack bfloat16 and complex128), so every ember dtype round-trips;
files are interchangeable with ``safetensors.torch``.

>>> import ember
>>> from ember.utils.safetensors import save, load
>>> load(save({'w': ember.ones(2)}))['w']
tensor([1., 1.])
"""
import os

import numpy as np

import ember

_CODES = {'float64': 'F64', 'float32': 'F32', 'float16': 'F16', 'bfloat16': 'BF16', 'int64': 'I64', 'int32': 'I32',
          'int16': 'I16', 'int8': 'I8', 'uint8': 'U8', 'bool': 'BOOL', 'complex64': 'C64', 'uint16': 'U16',
          'uint32': 'U32', 'uint64': 'U64', 'float8_e4m3fn': 'F8_E4M3', 'float8_e5m2': 'F8_E5M2'}
_DTYPES = {v: k for k, v in _CODES.items()}


def _lib():
    try:
        import safetensors
    except ImportError:
        raise ImportError("ember.utils.safetensors needs the 'safetensors' package: pip install 'ember[safetensors]'") \
            from None
    return safetensors


def _spec(name, t, keep):
    if not isinstance(t, ember.Tensor):
        raise ValueError(f"Key `{name}` is invalid, expected ember.Tensor but received {type(t).__name__}")
    if t.dtype.name not in _CODES:
        raise ValueError(f"safetensors cannot store dtype {t.dtype} (tensor '{name}')")
    a = np.ascontiguousarray(t.detach().cpu().numpy(force=True))
    keep.append(a)      # TensorSpec holds a raw pointer: the array must outlive serialize()
    return _lib().TensorSpec(dtype=t.dtype.name, shape=list(t.shape), data_ptr=a.ctypes.data,
                             data_len=a.nbytes)


def _check_shared(tensors):
    seen = {}
    for k, t in tensors.items():
        if t.numel() == 0:
            continue
        key = (t.untyped_storage().data_ptr(), t.device)
        if key in seen:
            raise RuntimeError(f"Some tensors share memory, this will lead to duplicate memory on disk and potential "
                               f"differences when loading them again: [{seen[key]!r}, {k!r}]. A potential way to "
                               f"correctly save your model is to use `save_model`.")
        seen[key] = k


def save(tensors, metadata=None):
    """The safetensors bytes of a ``{name: tensor}`` dict."""
    _check_shared(tensors)
    keep = []
    return bytes(_lib().serialize({k: _spec(k, t, keep) for k, t in tensors.items()}, metadata))


def save_file(tensors, filename, metadata=None):
    """Write ``{name: tensor}`` to ``filename`` (atomically: a temporary file renamed into place)."""
    _check_shared(tensors)
    tmp = f'{os.fspath(filename)}.tmp{os.getpid()}'
    try:
        keep = []
        _lib().serialize_file({k: _spec(k, t, keep) for k, t in tensors.items()}, tmp, metadata)
        os.replace(tmp, filename)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def load(data, device='cpu'):
    """``{name: tensor}`` from safetensors bytes."""
    out = {}
    for name, spec in _lib().deserialize(data):
        dt = getattr(ember, _DTYPES[spec['dtype']] if spec['dtype'] != 'BOOL' else 'bool')
        arr = np.frombuffer(bytearray(spec['data']), dtype=dt.np).reshape(spec['shape'])
        out[name] = ember.from_numpy(arr).to(device)
    return out


def load_file(filename, device='cpu'):
    with open(filename, 'rb') as f:
        return load(f.read(), device)
