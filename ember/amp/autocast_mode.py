"""``autocast`` (context manager and decorator), ``custom_fwd`` / ``custom_bwd``.

``autocast`` only sets thread-local state through ember's public functions
(``set_autocast_enabled``, ``set_autocast_dtype``, the cache flag and the
nesting count); the casting itself happens in the dispatcher's AutocastCPU
kernels. Device types and dtypes that cannot be autocast here are refused
as torch refuses them: a warning, and autocast stays off for the region.
"""
import functools
from ember._warn import warnings

import ember
# the AutocastCPU policy applied to a Python composite (nn.functional's losses, prelu, interpolate): front
# ends take it from here rather than from the dispatcher
from .._dispatch.autocast import autocast_composite as _autocast_composite  # noqa: F401
# for tracers that see operator calls before the AutocastCPU key (make_fx): the casts autocast would make
from .._dispatch.autocast import cast_for_mode as _cast_for_mode, excluded as _autocast_excluded  # noqa: F401

__all__ = ['autocast', 'custom_fwd', 'custom_bwd', 'is_autocast_available']


_KNOWN_DEVICE_TYPES = ('cpu', 'cuda', 'ipu', 'xpu', 'mkldnn', 'opengl', 'opencl', 'ideep', 'hip', 've', 'fpga', 'maia',
                       'xla', 'lazy', 'vulkan', 'mps', 'meta', 'hpu', 'mtia', 'privateuseone')
_AUTOCAST_DEVICE_TYPES = ('cpu', 'cuda', 'xpu', 'mps', 'hpu', 'xla', 'ipu', 'mtia', 'maia', 'privateuseone')


def is_autocast_available(device_type):
    """Whether autocast supports ``device_type`` (as torch answers: 'meta' cannot be autocast).

    >>> import ember
    >>> ember.amp.is_autocast_available('cpu')
    True
    """
    return device_type in _AUTOCAST_DEVICE_TYPES


def _cuda_available():
    cuda = getattr(ember, 'cuda', None)
    fn = getattr(cuda, 'is_available', None)
    return bool(fn()) if fn is not None else False


class autocast:
    """Run the enclosed region in mixed precision (torch.autocast).

    Under CPU autocast, matmul, linear, convolutions, bmm, addmm, … run in
    ``dtype`` (bfloat16 by default, or float16); losses, prod, factorizations …
    run in float32; other operators run unchanged.

    >>> import ember
    >>> a, b = ember.randn(2, 3), ember.randn(3, 4)
    >>> with ember.autocast('cpu', dtype=ember.bfloat16):
    ...     (a @ b).dtype, (a + 1).dtype
    (ember.bfloat16, ember.float32)
    """

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        if device_type.split(':')[0] not in _KNOWN_DEVICE_TYPES:
            raise RuntimeError(f"Expected one of {', '.join(_KNOWN_DEVICE_TYPES)} device type at start of device "
                               f"string: {device_type}")
        if not is_autocast_available(device_type):
            raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}'")
        if dtype is None:
            dtype = ember.get_autocast_dtype(device_type)
        self.device = device_type
        self.fast_dtype = dtype
        self._enabled = bool(enabled)
        self._cache_enabled = ember.is_autocast_cache_enabled() if cache_enabled is None else bool(cache_enabled)
        if device_type == 'cpu':
            if self._enabled and dtype not in (ember.bfloat16, ember.float16):
                warnings.warn("In CPU autocast, but the target dtype is not supported. Disabling autocast.\n"
                              "CPU Autocast only supports dtypes of torch.bfloat16, torch.float16 currently.")
                self._enabled = False
        elif device_type == 'cuda' and self._enabled and not _cuda_available():
            warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.")
            self._enabled = False

    def __enter__(self):
        dev = self.device
        self.prev = ember.is_autocast_enabled(dev)
        self.prev_fastdtype = ember.get_autocast_dtype(dev)
        self.prev_cache_enabled = ember.is_autocast_cache_enabled()
        ember.set_autocast_enabled(dev, self._enabled)
        ember.set_autocast_dtype(dev, self.fast_dtype)
        ember.autocast_increment_nesting()
        ember.set_autocast_cache_enabled(self._cache_enabled)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        # the cast cache lives as long as the outermost region: weights cast once per forward
        if ember.autocast_decrement_nesting() == 0:
            ember.clear_autocast_cache()
        ember.set_autocast_enabled(self.device, self.prev)
        ember.set_autocast_dtype(self.device, self.prev_fastdtype)
        ember.set_autocast_cache_enabled(self.prev_cache_enabled)
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with autocast(self.device, self.fast_dtype, self._enabled, self._cache_enabled):
                return func(*args, **kwargs)
        return decorate_autocast


def _cast(value, device_type, dtype):
    """Floating tensors on ``device_type`` (float64 excepted) cast to ``dtype``, through containers."""
    if isinstance(value, ember.Tensor):
        ok = value.is_floating_point() and value.device.type == device_type and value.dtype != ember.float64
        return value.to(dtype) if ok else value
    if isinstance(value, (str, bytes)):
        return value
    if isinstance(value, dict):
        return {_cast(k, device_type, dtype): _cast(v, device_type, dtype) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, device_type, dtype) for v in value)
    return value


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorator for the ``forward`` of a custom ``autograd.Function`` under autocast.

    With ``cast_inputs`` the forward runs with autocast off and its floating inputs
    cast to ``cast_inputs``; without it, the forward runs in the surrounding autocast
    state, which ``custom_bwd`` then restores for the backward.

    >>> import ember
    >>> class Twice(ember.autograd.Function):
    ...     @staticmethod
    ...     @ember.amp.custom_fwd(device_type='cpu', cast_inputs=ember.float32)
    ...     def forward(ctx, x):
    ...         return x * 2
    ...     @staticmethod
    ...     @ember.amp.custom_bwd(device_type='cpu')
    ...     def backward(ctx, g):
    ...         return g * 2
    >>> with ember.autocast('cpu'):
    ...     Twice.apply(ember.ones(2, dtype=ember.bfloat16)).dtype
    ember.float32
    """
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        # torch writes these on the ctx (args[0]) for custom_bwd; a forward without ctx (setup_context style)
        # has a tensor there, whose _dtype in ember is its real dtype: nothing is written on a tensor
        if isinstance(args[0], ember.Tensor):
            return _fwd_without_ctx(fwd, device_type, cast_inputs, args, kwargs)
        args[0]._dtype = ember.get_autocast_dtype(device_type)
        if cast_inputs is None:
            args[0]._fwd_used_autocast = ember.is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        autocast_context = ember.is_autocast_enabled(device_type)
        args[0]._fwd_used_autocast = False
        if autocast_context:
            with autocast(device_type=device_type, enabled=False):
                return fwd(*_cast(args, device_type, cast_inputs), **_cast(kwargs, device_type, cast_inputs))
        return fwd(*args, **kwargs)
    return decorate_fwd


def _fwd_without_ctx(fwd, device_type, cast_inputs, args, kwargs):
    if cast_inputs is not None and ember.is_autocast_enabled(device_type):
        with autocast(device_type=device_type, enabled=False):
            return fwd(*_cast(args, device_type, cast_inputs), **_cast(kwargs, device_type, cast_inputs))
    return fwd(*args, **kwargs)


def custom_bwd(bwd=None, *, device_type):
    """Decorator for the ``backward`` of a custom ``autograd.Function``: runs it in the
    autocast state its forward ran in (see `custom_fwd`)."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        with autocast(device_type=device_type, enabled=args[0]._fwd_used_autocast, dtype=args[0]._dtype):
            return bwd(*args, **kwargs)
    return decorate_bwd
