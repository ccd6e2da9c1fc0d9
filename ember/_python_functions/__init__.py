"""Public functions written in Python rather than declared operators (torch's torch/functional.py and the
Python half of torch/_tensor.py): varargs forms (``meshgrid(a, b)``), Python-value results (``unique``
returning a tuple, ``nonzero(as_tuple=True)``), torch's aliases, indexing (``Tensor.__getitem__``), and
signatures no schema expresses (``var(x, unbiased)``, ``normal(mean, std, size)``). Each calls operators
through ``ember.ops.aten`` only (tests/test_layering.py). Where torch's signature is several operator overloads
chosen by type, that is an overload group declared with the operators (ember/_ops/overloads.py), not code here.
One module per family; each lists its public names in ``__all__`` and may attach methods to ``ember.Tensor``.
Loaded after the generated operator functions. Each public function is wrapped here, once, to honour
``__torch_function__`` (NOTE [__torch_function__]); the methods the modules attach to ``ember.Tensor`` stay
unwrapped.
"""
import importlib
import pkgutil
import types

from ..overrides import public_function

# torch's public functions written in Python (torch/functional.py and a few in torch/__init__.py): a class
# attribute holding one binds ``self``; every other public function here is a builtin in torch, which does not
_WRITTEN_IN_PYTHON = frozenset({
    'atleast_1d', 'atleast_2d', 'atleast_3d', 'block_diag', 'broadcast_shapes', 'broadcast_tensors',
    'cartesian_prod', 'cdist', 'chain_matmul', 'einsum', 'istft', 'lu', 'meshgrid', 'norm', 'pca_lowrank', 'split',
    'stft', 'svd_lowrank', 'tensordot', 'unique', 'unique_consecutive', 'unravel_index', 'solve', 'symeig', 'eig',
    'matrix_rank', 'typename', 'is_storage', 'set_default_tensor_type', 'set_warn_always', 'is_warn_always_enabled',
    'compile', 'sym_int', 'sym_float', 'sym_max', 'sym_min', 'sym_not', 'sym_ite'})


def _public(fn, name, _done={}):
    """A hand-written function wrapped once (aliases stay one object); generated entry points and the
    wrappers _ops/public.py made check in the dispatcher already."""
    if not isinstance(fn, types.FunctionType) or getattr(fn, '__ember_public__', False):
        return fn
    op = getattr(fn, '_op', None)
    if op is not None and (fn is op.call or fn is op.public):
        return fn
    if getattr(fn, '_overloads', None) is not None:     # an overload group's chooser checks itself
        return fn
    if id(fn) not in _done:
        wrapped = public_function(fn, builtin=not name.startswith('_') and name not in _WRITTEN_IN_PYTHON)
        wrapped.__module__ = 'ember'      # pickled by reference as ember.<name>, the wrapped function
        if '<locals>' in wrapped.__qualname__ or wrapped.__qualname__ != wrapped.__name__:
            wrapped.__qualname__ = name   # made by a factory (ember.hann_window): its public name
        _done[id(fn)] = (fn, wrapped)
    return _done[id(fn)][1]

__all__ = []
for _m in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    _mod = importlib.import_module(f'{__name__}.{_m.name}')
    for _n in getattr(_mod, '__all__', ()):
        globals()[_n] = _public(getattr(_mod, _n), _n)
        __all__.append(_n)
