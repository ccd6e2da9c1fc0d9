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

_PRECISIONS = ('highest', 'high', 'medium')
_state = {'matmul_precision': 'highest', 'deterministic': False, 'warn_only': False}
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
    """Record the switch; every ember CPU kernel is already deterministic, so no operator raises for it.

    >>> ember.use_deterministic_algorithms(True); ember.are_deterministic_algorithms_enabled()
    True
    """
    if not isinstance(mode, bool):
        raise TypeError(f"use_deterministic_algorithms(): argument 'mode' must be bool, not {type(mode).__name__}")
    _state['deterministic'], _state['warn_only'] = mode, bool(warn_only)


def are_deterministic_algorithms_enabled():
    return _state['deterministic']


def is_deterministic_algorithms_warn_only_enabled():
    return _state['warn_only']


@contextlib.contextmanager
def flags_frozen():
    yield


from . import cudnn, cuda, mps, mkldnn, mkl, openmp, cpu  # noqa: E402,F401
