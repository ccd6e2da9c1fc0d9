"""torch.fft's transforms: one declaration per family, NumPy's pocketfft behind them (ember/_backends/cpu/fft.py).

``fft_fft``/``fft_ifft``/``fft_fftn``/... have torch's schemas: ``n``/``s`` pad or trim the transformed
dimensions, ``dim`` picks them, ``norm`` is ``'backward'`` (default), ``'ortho'`` or ``'forward'``. A real
input to a complex transform is promoted (float32 -> complex64, integers -> the default dtype's complex).
Each transform is linear, so its gradient is its adjoint (NOTE [complex gradients] in autograd/kernels.py):
- complex-to-complex: the opposite transform with the dual normalisation ('backward' <-> 'forward'), then the
  padding or trimming that ``n``/``s`` did, undone;
- real-to-complex (rfft*, ihfft): the half spectrum padded with zeros to full length, then as above; a real
  input keeps the real part;
- complex-to-real (irfft*, hfft): the matching real-to-complex transform of the gradient, with the entries
  that stand for two conjugate frequencies doubled (torch's fft_c2r_backward).
The formulas are written in the transforms themselves, so they differentiate again.

>>> import ember
>>> ember.fft.fft(ember.tensor([1.0, 0.0, 0.0, 0.0]))
tensor([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j])
"""
from .._core import dtype as D
from .registry import declare
from .views import wrap_dim
from .._dispatch.ops_namespace import aten


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


# --- derivatives ------------------------------------------------------------------------

_DUAL = {None: 'forward', 'backward': 'forward', 'forward': 'backward', 'ortho': 'ortho'}




def _plan(sizes, s, dim, default_all, c2r):
    """The transformed dims and each one's transform length, from the input's sizes and the arguments."""
    nd = len(sizes)
    if dim is None:
        dims = list(range(nd - len(s), nd)) if s is not None else (list(range(nd)) if default_all else [nd - 1])
    else:
        dims = [wrap_dim(d, nd) for d in ([dim] if isinstance(dim, int) else dim)]
    ns = []
    for i, d in enumerate(dims):
        n = s[i] if s is not None and s[i] != -1 else None
        if n is None:
            n = 2 * (sizes[d] - 1) if c2r and i == len(dims) - 1 else sizes[d]
        ns.append(n)
    return dims, ns


def _resize(g, dims, sizes):
    """Undo the zero padding / trimming of the forward transform's ``n``/``s`` on ``g``."""
    for d, n in zip(dims, sizes):
        have = g.shape[d]
        if have > n:
            g = g.narrow(d, 0, n)
        elif have < n:
            pads = [0, 0] * (g.dim() - 1 - d) + [0, n - have]
            g = aten.constant_pad_nd.default(g, pads, 0)
    return g


def _grad_to_complex(adjoint, default_all, onesided):
    """c2c, and r2c when ``onesided`` (its half spectrum is zero-padded to full length first)."""
    def formula(grad, self_sizes, s, dim, norm):
        dims, ns = _plan(self_sizes, s, dim, default_all, False)
        g = _resize(grad, dims[-1:], ns[-1:]) if onesided else grad
        g = getattr(aten, adjoint).default(g, None, dims, _DUAL[norm])
        return _resize(g, dims, [self_sizes[d] for d in dims])
    return formula


def _grad_c2r(counterpart, default_all):
    def formula(grad, self_sizes, s, dim, norm):
        dims, ns = _plan(self_sizes, s, dim, default_all, True)
        g = getattr(aten, counterpart).default(grad, None, dims[-1] if counterpart == 'fft_ihfft' else dims, _DUAL[norm])
        n = ns[-1]
        twice = n - n // 2 - 1          # entries 1..twice stand for two conjugate frequencies each
        w = [1.0] + [2.0] * twice + [1.0] * (n // 2 + 1 - 1 - twice)
        g = g * g.new_tensor(w, dtype=g.dtype.to_real()).reshape(
            [-1] + [1] * (g.dim() - 1 - dims[-1]))
        return _resize(g, dims, [self_sizes[d] for d in dims])
    return formula


def _one_dim(formula):
    """A 1-D transform's formula (arguments n, dim) in terms of the n-D one's (s, dim)."""
    return lambda grad, self_sizes, n, dim, norm: formula(grad, self_sizes, None if n is None else [n], dim, norm)


_GRADS = {
    'fft': _grad_to_complex('fft_ifftn', False, False), 'ifft': _grad_to_complex('fft_fftn', False, False),
    'rfft': _grad_to_complex('fft_ifftn', False, True), 'ihfft': _grad_to_complex('fft_fftn', False, True),
    'irfft': _grad_c2r('fft_rfftn', False), 'hfft': _grad_c2r('fft_ihfft', False),
    'fft2': _grad_to_complex('fft_ifftn', False, False), 'ifft2': _grad_to_complex('fft_fftn', False, False),
    'rfft2': _grad_to_complex('fft_ifftn', False, True), 'irfft2': _grad_c2r('fft_rfftn', False),
    'fftn': _grad_to_complex('fft_ifftn', True, False), 'ifftn': _grad_to_complex('fft_fftn', True, False),
    'rfftn': _grad_to_complex('fft_ifftn', True, True), 'irfftn': _grad_c2r('fft_rfftn', True),
}


_WHY = ("one pocketfft call per transform; torch's composites choose among _fft_c2c/_fft_r2c/_fft_c2r, "
        "which ember's kernel folds in")
_ONE = 'SymInt? n=None, int dim=-1, str? norm=None'
_TWO = 'SymInt[1]? s=None, int[1] dim=[-2,-1], str? norm=None'
_ND = 'SymInt[1]? s=None, int[1]? dim=None, str? norm=None'

for _name, _kind in (('fft', 'c2c'), ('ifft', 'c2c'), ('rfft', 'r2c'), ('irfft', 'c2r'), ('hfft', 'c2r'),
                     ('ihfft', 'r2c')):
    declare(f'fft_{_name}(Tensor self, {_ONE}) -> Tensor', meta=_meta(_kind, f'fft_{_name}', None),
            method=False, function=False, out=True, derivatives={'self': _one_dim(_GRADS[_name])},
            complex_formulas=True, primitive_because=_WHY, forward='linear')
for _name, _kind in (('fft2', 'c2c'), ('ifft2', 'c2c'), ('rfft2', 'r2c'), ('irfft2', 'c2r')):
    declare(f'fft_{_name}(Tensor self, {_TWO}) -> Tensor', meta=_meta(_kind, f'fft_{_name}', 'two'),
            method=False, function=False, out=True, derivatives={'self': _GRADS[_name]}, complex_formulas=True,
            primitive_because=_WHY, forward='linear')
for _name, _kind in (('fftn', 'c2c'), ('ifftn', 'c2c'), ('rfftn', 'r2c'), ('irfftn', 'c2r')):
    declare(f'fft_{_name}(Tensor self, {_ND}) -> Tensor', meta=_meta(_kind, f'fft_{_name}', 'all'),
            method=False, function=False, out=True, derivatives={'self': _GRADS[_name]}, complex_formulas=True,
            primitive_because=_WHY, forward='linear')
