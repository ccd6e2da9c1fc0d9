"""Turn OpInfo samples into ember and torch calls and compare the results."""
import numpy as np
import torch

import ember
from opinfo.core import Arg


def materialize(sample, dtype, seed=0):
    """The sample's arguments with every Arg replaced by one concrete NumPy array (same for both libraries)."""
    rng = np.random.default_rng(seed)

    def conv(x):
        if isinstance(x, Arg):
            return x.array(dtype, rng)
        if isinstance(x, list):
            return [conv(y) for y in x]
        if isinstance(x, tuple):
            return tuple(conv(y) for y in x)
        return x
    return conv(list(sample.args)), {k: conv(v) for k, v in sample.kwargs.items()}



def complexify(x, rng):
    """A float64 sample made complex: each float64 array gets a random imaginary part (lists, tuples inside)."""
    if isinstance(x, np.ndarray) and x.dtype == np.float64:
        return x + 1j * rng.uniform(-1, 1, x.shape)
    if isinstance(x, list):
        return [complexify(y, rng) for y in x]
    if isinstance(x, tuple):
        return tuple(complexify(y, rng) for y in x)
    return x


def to_lib(x, lib, requires_grad=False, device=None):
    """NumPy arrays -> tensors of ``lib`` (ember or torch), keeping non-contiguous layouts."""
    if isinstance(x, np.ndarray):
        if lib is torch and x.size == 0:   # NumPy gives new empty arrays zero strides; torch's own tensors have real ones
            t = torch.empty(x.shape, dtype=torch.from_numpy(x.copy()).dtype)
        elif lib is torch:
            t = torch.from_numpy(np.ascontiguousarray(x.T).T.copy() if not x.flags.c_contiguous else x.copy())
            if not x.flags.c_contiguous and x.ndim == 2:
                t = torch.from_numpy(np.ascontiguousarray(x.T).copy()).T
        else:
            t = ember.from_numpy(np.ascontiguousarray(x.T).copy()).T if (not x.flags.c_contiguous and x.ndim == 2) \
                else ember.from_numpy(x.copy())
            if device is not None:
                t = t.to(device)
        if requires_grad and t.dtype.is_floating_point:
            t.requires_grad_(True)
        return t
    if isinstance(x, list):
        return [to_lib(y, lib, requires_grad, device) for y in x]
    if isinstance(x, tuple):
        return tuple(to_lib(y, lib, requires_grad, device) for y in x)
    if isinstance(x, dict):
        return {k: to_lib(v, lib, requires_grad, device) for k, v in x.items()}
    if lib is torch and isinstance(x, ember.dtype):
        return getattr(torch, x.name)
    return x


def resolve(lib, path):
    obj = lib
    for part in path.split('.'):
        obj = getattr(obj, part)
    return obj


def call(info, lib, args, kwargs):
    if info.method:
        return getattr(args[0], info.torch_name if lib is torch else info.name)(*args[1:], **kwargs)
    if lib is torch and info.torch_fn is not None:     # torch has the schema but no CPU kernel
        return info.torch_fn(*args, **kwargs)
    fn = resolve(lib, info.torch_name if lib is torch else (info.name if not info.torch_name.startswith('nn.')
                                                            else info.torch_name))
    return fn(*args, **kwargs)


def flat(out):
    if isinstance(out, (tuple, list)):
        res = []
        for o in out:
            res.extend(flat(o))
        return res
    return [out]


def as_np(t):
    if isinstance(t, torch.Tensor):
        return t.detach().numpy(force=True) if t.dtype != torch.bfloat16 else t.detach().float().numpy()  # force: ZeroTensor grads
    if isinstance(t, ember.Tensor):
        return np.asarray(t.detach()._a)
    return np.asarray(t)


def assert_same(e, t, info, what=''):
    if isinstance(t, torch.Tensor):
        assert isinstance(e, ember.Tensor), f'{what}: expected a Tensor, got {type(e)}'
        assert e.dtype.name == str(t.dtype).replace('torch.', ''), f'{what}: dtype {e.dtype} vs {t.dtype}'
        assert tuple(e.shape) == tuple(t.shape), f'{what}: shape {tuple(e.shape)} vs {tuple(t.shape)}'
        if info.view:
            assert e.stride() == t.stride(), f'{what}: strides {e.stride()} vs {t.stride()}'
            assert e.storage_offset() == t.storage_offset(), f'{what}: offset'
        if not info.random:
            np.testing.assert_allclose(as_np(e), as_np(t), atol=info.atol, rtol=info.rtol, equal_nan=True,
                                       err_msg=what)
    else:
        if not info.random:
            assert e == t or (isinstance(t, float) and np.isclose(e, t)), f'{what}: {e} vs {t}'


def both(fn):
    """``fn(lib)`` under torch and under ember, warnings silenced: ``[(outcome, value or message)] * 2``, where the
    outcome is 'ok' or the exception's class name, so a test compares results and errors alike."""
    import warnings
    out = []
    for lib in (torch, ember):
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            try:
                out.append(('ok', fn(lib)))
            except Exception as e:      # noqa: BLE001 - the error is what is compared
                out.append((type(e).__name__, str(e)))
    return out
