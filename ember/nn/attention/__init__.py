"""torch.nn.attention: ``SDPBackend`` and ``sdpa_kernel``, the context manager that chooses which kernels
``scaled_dot_product_attention`` may use.

Like torch's, it switches the process-wide flags of ``ember.backends.cuda`` (``flash_sdp_enabled()`` and the
others) for the duration of the block. ember's CPU attention has torch's two CPU kernels: the fused flash
kernel (``_scaled_dot_product_flash_attention_for_cpu``, where its conditions hold) and the math path; with
both switched off, as with ``sdpa_kernel(SDPBackend.EFFICIENT_ATTENTION)`` on a CPU, the call raises torch's
"No viable backend" error.

>>> import ember
>>> from ember.nn.attention import SDPBackend, sdpa_kernel
>>> q = ember.ones(1, 2, 3, 4)
>>> with sdpa_kernel(SDPBackend.MATH):
...     ember.nn.functional.scaled_dot_product_attention(q, q, q).shape
ember.Size([1, 2, 3, 4])
"""
import contextlib
import enum

from ...backends import cuda as _cuda

__all__ = ['SDPBackend', 'sdpa_kernel', 'WARN_FOR_UNFUSED_KERNELS']

WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(enum.IntEnum):
    """The kernels of scaled_dot_product_attention, with torch's values and names."""
    __str__ = enum.Enum.__str__
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


_FLAGS = {SDPBackend.MATH: _cuda.enable_math_sdp, SDPBackend.FLASH_ATTENTION: _cuda.enable_flash_sdp,
          SDPBackend.EFFICIENT_ATTENTION: _cuda.enable_mem_efficient_sdp,
          SDPBackend.CUDNN_ATTENTION: _cuda.enable_cudnn_sdp}
_READ = {SDPBackend.MATH: _cuda.math_sdp_enabled, SDPBackend.FLASH_ATTENTION: _cuda.flash_sdp_enabled,
         SDPBackend.EFFICIENT_ATTENTION: _cuda.mem_efficient_sdp_enabled,
         SDPBackend.CUDNN_ATTENTION: _cuda.cudnn_sdp_enabled}


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """Inside the block only ``backends`` (one SDPBackend or a list) are enabled; the flags are restored after.
    ``set_priority`` orders them in torch; ember has at most one applicable CPU kernel per call, so the order
    changes nothing."""
    chosen = list(backends) if isinstance(backends, (list, tuple, set)) else [backends]
    for b in chosen:
        if not isinstance(b, SDPBackend):
            raise TypeError(f"sdpa_kernel expects SDPBackend values, got {type(b).__name__}: {b!r}")
    before = {b: read() for b, read in _READ.items()}
    try:
        for b, enable in _FLAGS.items():
            enable(b in chosen)
        yield {}
    finally:
        for b, enable in _FLAGS.items():
            enable(before[b])
