"""OpInfo records for torch.fft's transforms (ember/_ops/fft.py). Values, dtypes and meta shapes are compared
with torch, and gradients and second-order gradients (real inputs here; complex ones in test_complex_autograd.py)."""
import numpy as np

from .core import op, S, Arg

_DT = ('float32', 'float64', 'complex64', 'complex128', 'int64')


def _cplx(shape, dt):
    rng = np.random.default_rng(sum(shape) + 7)
    a = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    return a.astype(dt) if np.dtype(dt).kind == 'c' else rng.standard_normal(shape).astype(dt)


def _one(real_only):
    def gen(dt):
        if real_only and np.dtype(dt).kind == 'c':
            yield S(_cplx((6,), dt))                  # an error in torch: complex input to a real transform
            return
        x = lambda *s: _cplx(s, dt) if np.dtype(dt).kind in 'fc' else np.arange(np.prod(s)).reshape(s).astype(dt)
        yield S(x(8))
        yield S(x(3, 8), 5)
        yield S(x(3, 8), 12, 0)
        yield S(x(2, 3, 6), None, 1, 'ortho')
        yield S(x(4, 5), None, -1, 'forward')
        yield S(x(5), None, -1, 'bogus')
        yield S(x(5), 0)
    return gen


def _nd(two):
    def gen(dt):
        if np.dtype(dt).kind not in 'fc':
            return
        x = lambda *s: _cplx(s, dt)
        yield S(x(4, 6))
        yield S(x(2, 4, 6), (3, 8))
        yield S(x(2, 4, 6), None, (0, 2), 'ortho')
        if not two:
            yield S(x(2, 3, 4))
            yield S(x(2, 3, 4), (4, -1))
    return gen


for _n in ('fft', 'ifft', 'irfft', 'hfft'):
    op(f'fft.{_n}', _one(False), dtypes=_DT, torch_name=f'fft.{_n}')
for _n in ('rfft', 'ihfft'):
    op(f'fft.{_n}', _one(True), dtypes=_DT, torch_name=f'fft.{_n}')
for _n in ('fft2', 'ifft2', 'irfft2'):
    op(f'fft.{_n}', _nd(True), dtypes=_DT)
for _n in ('fftn', 'ifftn', 'irfftn'):
    op(f'fft.{_n}', _nd(False), dtypes=_DT)
op('fft.rfft2', lambda dt: (s for s in _nd(True)(dt) if np.dtype(dt).kind == 'f'), dtypes=_DT,
   )
op('fft.rfftn', lambda dt: (s for s in _nd(False)(dt) if np.dtype(dt).kind == 'f'), dtypes=_DT,
   )
