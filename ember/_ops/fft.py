"""torch.fft's transforms: one declaration per family, NumPy's pocketfft behind them (ember/_backends/cpu/fft.py).

``fft_fft``/``fft_ifft``/``fft_fftn``/... have torch's schemas: ``n``/``s`` pad or trim the transformed
dimensions, ``dim`` picks them, ``norm`` is ``'backward'`` (default), ``'ortho'`` or ``'forward'``. A real
input to a complex transform is promoted (float32 -> complex64, integers -> the default dtype's complex).
The transforms have no derivative formulas yet: ember's autograd does not handle complex gradients, so
backward through a transform raises torch's "derivative ... is not implemented" error.

>>> import ember
>>> ember.fft.fft(ember.tensor([1.0, 0.0, 0.0, 0.0]))
tensor([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j])
"""
from .._core import dtype as D
from .registry import declare
from .views import wrap_dim


def _norm_ok(name, norm):
    if norm not in (None, 'backward', 'ortho', 'forward'):
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _complex_of(d):
    if d.is_complex:
        return d
    if d.category < 2:
        d = D.get_default_dtype()
    if d not in (D.float32, D.float64):
        raise RuntimeError(f"Unsupported dtype {d.name}")
    return d.to_complex()


def _real_of(d):
    if d.is_complex:
        return d.to_real()
    return d if d in (D.float32, D.float64) else D.get_default_dtype()


def _dims(self, s, dim, name, default_all):
    nd = self.dim()
    if dim is None:
        dims = list(range(nd - len(s), nd)) if s is not None else (list(range(nd)) if default_all else [nd - 1])
    else:
        dims = [wrap_dim(d, nd) for d in ([dim] if isinstance(dim, int) else dim)]
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"{name} dims must be unique")
    if s is not None and len(s) != len(dims):
        raise RuntimeError(f"When given, dim and shape arguments must have the same length")
    return dims


def _meta(kind, name, nd_default):
    """kind: 'c2c', 'r2c' (output last dim n//2+1) or 'c2r' (output last dim n, default 2*(m-1))."""
    def meta(self, s=None, dim=None, norm=None):
        _norm_ok(name, norm)
        if kind == 'r2c' and self._dtype.is_complex:
            raise RuntimeError(f"{name} expects a real input tensor, but got {self._dtype.name}")
        single = not isinstance(s, (list, tuple)) and not isinstance(dim, (list, tuple)) and nd_default is None
        ss = None if s is None else ([s] if single else list(s))
        dims = _dims(self, ss, dim if dim is not None or not single else -1, name, nd_default == 'all')
        shape = list(self.shape)
        for i, d in enumerate(dims):
            n = ss[i] if ss is not None and ss[i] != -1 else None
            last = i == len(dims) - 1
            if kind == 'c2r' and last:
                n = n if n is not None else 2 * (shape[d] - 1)
                if n < 1:
                    raise RuntimeError(f"Invalid number of data points ({n}) specified")
                shape[d] = n
            else:
                n = n if n is not None else shape[d]
                if n < 1:
                    raise RuntimeError(f"Invalid number of data points ({n}) specified")
                shape[d] = n // 2 + 1 if (kind == 'r2c' and last) else n
        out = _real_of(self._dtype) if kind == 'c2r' else _complex_of(self._dtype)
        return tuple(shape), out
    return meta


_ONE = 'SymInt? n=None, int dim=-1, str? norm=None'
_TWO = 'SymInt[1]? s=None, int[1] dim=[-2,-1], str? norm=None'
_ND = 'SymInt[1]? s=None, int[1]? dim=None, str? norm=None'

for _name, _kind in (('fft', 'c2c'), ('ifft', 'c2c'), ('rfft', 'r2c'), ('irfft', 'c2r'), ('hfft', 'c2r'),
                     ('ihfft', 'r2c')):
    declare(f'fft_{_name}(Tensor self, {_ONE}) -> Tensor', meta=_meta(_kind, f'fft_{_name}', None),
            method=False, function=False, out=True)
for _name, _kind in (('fft2', 'c2c'), ('ifft2', 'c2c'), ('rfft2', 'r2c'), ('irfft2', 'c2r')):
    declare(f'fft_{_name}(Tensor self, {_TWO}) -> Tensor', meta=_meta(_kind, f'fft_{_name}', 'two'),
            method=False, function=False, out=True)
for _name, _kind in (('fftn', 'c2c'), ('ifftn', 'c2c'), ('rfftn', 'r2c'), ('irfftn', 'c2r')):
    declare(f'fft_{_name}(Tensor self, {_ND}) -> Tensor', meta=_meta(_kind, f'fft_{_name}', 'all'),
            method=False, function=False, out=True)
