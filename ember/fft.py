"""``ember.fft``: torch.fft's transforms and helpers.

The transforms are operators (ember/_ops/fft.py) with torch's signatures; ``fftfreq``, ``rfftfreq``,
``fftshift`` and ``ifftshift`` are built from other operators, and so are the Hermitian n-D transforms:
``ihfftn`` is the conjugate of ``rfftn`` with the dual normalisation, ``hfftn`` is ``irfftn`` of the conjugate
(as NumPy defines the 1-D pair). Every transform has gradients (NOTE [complex gradients]).

>>> import ember
>>> ember.fft.rfft(ember.tensor([1.0, 2.0, 3.0, 4.0]))
tensor([10.+0.j, -2.+2.j, -2.+0.j])
"""
import ember
from ember._core.dtype import scalar_name as _scalar_name
from ember._python_functions._out import write_out as _write_out

__all__ = ['fft', 'ifft', 'rfft', 'irfft', 'hfft', 'ihfft', 'fft2', 'ifft2', 'rfft2', 'irfft2', 'fftn', 'ifftn',
           'rfftn', 'irfftn', 'fftfreq', 'rfftfreq', 'fftshift', 'ifftshift', 'hfft2', 'ihfft2', 'hfftn', 'ihfftn']

_aten = ember.ops.aten


def _transform(name):
    op = getattr(_aten, f'fft_{name}').default
    out_op = getattr(_aten, f'fft_{name}').out

    def fn(input, *args, out=None, **kwargs):
        return op(input, *args, **kwargs) if out is None else out_op(input, *args, out=out, **kwargs)
    fn.__name__ = name
    fn.__doc__ = f"torch.fft.{name}: {op._schema if hasattr(op, '_schema') else name}"
    return fn


for _n in ('fft', 'ifft', 'rfft', 'irfft', 'hfft', 'ihfft', 'fft2', 'ifft2', 'rfft2', 'irfft2', 'fftn', 'ifftn',
           'rfftn', 'irfftn'):
    globals()[_n] = _transform(_n)


def fftfreq(n, d=1.0, *, dtype=None, device=None, requires_grad=False):
    """The sample frequencies of an n-point transform: [0, 1, ..., n//2 - 1 (or n//2), -n//2, ..., -1] / (d n)."""
    k = ember.arange(n, dtype=dtype, device=device)
    k = ember.where(k < (n + 1) // 2, k, k - n)
    r = k / (d * n)
    return r.requires_grad_() if requires_grad else r


def rfftfreq(n, d=1.0, *, dtype=None, device=None, requires_grad=False):
    """The sample frequencies of rfft: [0, 1, ..., n//2] / (d n)."""
    r = ember.arange(n // 2 + 1, dtype=dtype, device=device) / (d * n)
    return r.requires_grad_() if requires_grad else r


def _shift(input, dim, sign):
    dims = list(range(input.dim())) if dim is None else ([dim] if isinstance(dim, int) else list(dim))
    shifts = [sign * (input.shape[d] // 2) if sign > 0 else -(input.shape[d] // 2) for d in dims]
    return ember.roll(input, shifts, dims)


def fftshift(input, dim=None):
    """Move the zero frequency to the centre: roll each dim by n // 2."""
    return _shift(input, dim, 1)


def ifftshift(input, dim=None):
    """The inverse of fftshift: roll each dim by -(n // 2)."""
    return _shift(input, dim, -1)


_DUAL = {None: 'forward', 'backward': 'forward', 'forward': 'backward', 'ortho': 'ortho'}


def hfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The n-D FFT of a Hermitian-symmetric signal given by its half (last dim): irfftn of the conjugate."""
    return irfftn(ember.as_tensor(input).conj(), s, dim, _DUAL[norm], out=out)


def ihfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The inverse of hfftn for a real input: the conjugate of rfftn with the dual normalisation."""
    r = rfftn(input, s, dim, _DUAL[norm]).conj()
    if out is None:
        return r
    if not out.is_complex():
        raise RuntimeError(f"ihfftn expects a complex output tensor, but got {_scalar_name(out.dtype)}")
    # any complex out; torch's out= kernel (_fft_c2c) refuses inputs that require grad
    return _write_out(out, r, cast=False, refuse_grad='_fft_c2c')


def hfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return hfftn(input, s, dim, norm, out=out)


def ihfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return ihfftn(input, s, dim, norm, out=out)
