"""ember.backends: torch.backends' switches, with the answers of a CPU-only build.

The flags are plain settings that programs read and write (``cudnn.benchmark =
True``, ``cuda.matmul.allow_tf32 = True``); ember's NumPy kernels have no
cuDNN, TF32 or MKL-DNN paths, so setting them changes no result, exactly as on
a torch build without those libraries. The ``is_available()`` answers are what
is true of this process. Process-wide switches torch keeps at top level
(``use_deterministic_algorithms``, ``set_float32_matmul_precision``) live here
too, since ``backends.cuda.matmul.allow_tf32`` reads the same state.

>>> import ember
>>> ember.backends.cudnn.is_available(), ember.backends.mps.is_available()
(False, False)
"""
import contextlib
import types

from .._core import determinism as _determinism

_PRECISIONS = ('highest', 'high', 'medium')
_state = {'matmul_precision': 'highest'}
fp32_precision = 'none'


def set_float32_matmul_precision(precision):
    """``'highest'`` (default), ``'high'`` or ``'medium'``; ember always computes float32 products in float32.

    >>> ember.set_float32_matmul_precision('high'); ember.get_float32_matmul_precision()
    'high'
    """
    if precision in _PRECISIONS:     # torch ignores an unknown name
        _state['matmul_precision'] = precision


def get_float32_matmul_precision():
    return _state['matmul_precision']


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Record the switch; every ember CPU kernel is already deterministic, so no operator raises for it. With it on,
    ``empty`` fills its memory (``torch.utils.deterministic.fill_uninitialized_memory``).

    >>> ember.use_deterministic_algorithms(True); ember.are_deterministic_algorithms_enabled()
    True
    """
    if not isinstance(mode, bool):
        raise TypeError(f"use_deterministic_algorithms(): argument 'mode' must be bool, not {type(mode).__name__}")
    _determinism.state['deterministic'], _determinism.state['warn_only'] = mode, bool(warn_only)


def are_deterministic_algorithms_enabled():
    return _determinism.state['deterministic']


def is_deterministic_algorithms_warn_only_enabled():
    return _determinism.state['warn_only']


def _fill_uninitialized_memory(mode=None):
    """torch.utils.deterministic.fill_uninitialized_memory's value (set it with ``mode``)."""
    if mode is not None:
        if not isinstance(mode, bool):
            raise TypeError(f"expected a bool, but got {type(mode).__name__}")
        _determinism.state['fill_uninitialized_memory'] = mode
    return _determinism.state['fill_uninitialized_memory']


# torch.backends' freeze: after disable_global_flags(), assigning a cudnn/mkldnn flag raises (their flags() context
# managers and __allow_nonbracketed_mutation still may), as torch's PropModule does
_mutation = {'allowed': True}


def disable_global_flags():
    _mutation['allowed'] = False


def flags_frozen():
    return not _mutation['allowed']


@contextlib.contextmanager
def __allow_nonbracketed_mutation():
    old = _mutation['allowed']
    _mutation['allowed'] = True
    try:
        yield
    finally:
        _mutation['allowed'] = old


class _GuardedFlags(types.ModuleType):
    """A backends module whose flags (``_FLAGS``) refuse assignment while the flags are frozen."""

    def __setattr__(self, name, value):
        if name in self._FLAGS and flags_frozen():
            from .._core import naming
            raise RuntimeError(f"not allowed to set {naming.shown}{self.__name__[len('ember'):]} flags after "
                               f"disable_global_flags; please use flags() context manager instead")
        super().__setattr__(name, value)


def _guard(module, flags):
    module._FLAGS = frozenset(flags)
    module.__class__ = _GuardedFlags


from . import cudnn, cuda, mps, mkldnn, mkl, openmp, cpu, opt_einsum, quantized, mha  # noqa: E402,F401
_guard(cudnn, ('enabled', 'benchmark', 'benchmark_limit', 'deterministic', 'allow_tf32'))
_guard(mkldnn, ('enabled',))
