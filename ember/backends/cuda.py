"""torch.backends.cuda without CUDA: ``is_built()`` False; matmul and SDPA switches are settable.

``matmul.allow_tf32`` shares its state with ``ember.set_float32_matmul_precision``
('highest' means TF32 off), as in torch.
"""
import contextlib

from .._ops.attention import SDP_ENABLED as _sdp      # the operator's switches, as torch's at::Context flags


def is_built():
    return False


class _Matmul:
    allow_fp16_reduced_precision_reduction = True
    allow_bf16_reduced_precision_reduction = True
    fp32_precision = 'none'

    @property
    def allow_tf32(self):
        from . import get_float32_matmul_precision
        return get_float32_matmul_precision() != 'highest'

    @allow_tf32.setter
    def allow_tf32(self, flag):
        from . import set_float32_matmul_precision
        set_float32_matmul_precision('high' if flag else 'highest')


matmul = _Matmul()


def flash_sdp_enabled():
    return _sdp['flash']


def mem_efficient_sdp_enabled():
    return _sdp['mem_efficient']


def math_sdp_enabled():
    return _sdp['math']


def cudnn_sdp_enabled():
    return _sdp['cudnn']


def enable_flash_sdp(enabled):
    _sdp['flash'] = bool(enabled)


def enable_mem_efficient_sdp(enabled):
    _sdp['mem_efficient'] = bool(enabled)


def enable_math_sdp(enabled):
    _sdp['math'] = bool(enabled)


def enable_cudnn_sdp(enabled):
    _sdp['cudnn'] = bool(enabled)


@contextlib.contextmanager
def sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True, enable_cudnn=True):
    """The switches inside the block; ember's CPU attention has one (math) path, so results do not change."""
    old = dict(_sdp)
    _sdp.update(flash=enable_flash, math=enable_math, mem_efficient=enable_mem_efficient, cudnn=enable_cudnn)
    try:
        yield
    finally:
        _sdp.update(old)
