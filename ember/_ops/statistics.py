"""Counting and order statistics: bincount, histc, quantile/nanquantile, logspace.

``bincount`` and ``histc`` are kernels (their output length depends on the
data for bincount, so they cannot run on Meta, as in torch). ``quantile`` is a
composite of sort, gather and lerp written the way torch's
``quantile_compute`` is, so its gradients (to the input and, for ``linear``,
to ``q``) are torch's without a formula of their own.
"""
from .._core import dtype as D
from .registry import declare
from .views import wrap_dim

# --- bincount ---------------------------------------------------------------------------


def _bincount_meta(self, weights=None, minlength=0):
    from .indexing import _no_meta
    if self._dtype.category != 1 or self._dtype is D.bool_:     # integral only
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{_type_word(self._dtype)}'")
    if self.dim() != 1:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is not None and (weights.dim() != 1 or weights.shape[0] != self.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    _no_meta('bincount', self)
    return None


def _type_word(dt):
    return {'float32': 'Float', 'float64': 'Double', 'float16': 'Half', 'bfloat16': 'BFloat16', 'int64': 'Long',
            'int32': 'Int', 'int16': 'Short', 'int8': 'Char', 'uint8': 'Byte', 'bool': 'Bool'}.get(dt.name, dt.name)


declare('bincount(Tensor self, Tensor? weights=None, SymInt minlength=0) -> Tensor', meta=_bincount_meta,
        differentiable=False)


# --- histc ------------------------------------------------------------------------------------

def _histc_meta(self, bins=100, min=0, max=0):
    if not self._dtype.is_floating_point:
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for '{_type_word(self._dtype)}'")
    if bins <= 0:
        raise RuntimeError("torch.histc: bins must be > 0")
    if min > max:
        raise RuntimeError("torch.histc: max must be larger than min")
    return (int(bins),), self._dtype


declare('histc(Tensor self, int bins=100, Scalar min=0, Scalar max=0) -> Tensor', meta=_histc_meta, out=True,
        differentiable=False)


# --- quantile / nanquantile ----------------------------------------------------------------

_INTERP = ('linear', 'lower', 'higher', 'midpoint', 'nearest')


def _quantile_checks(name, self, q, interpolation):
    if self.numel() == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    if q.dim() > 1:
        raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
    if self._dtype not in (D.float32, D.float64):
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    if q._dtype is not self._dtype:
        raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
    if interpolation not in _INTERP:
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, midpoint or nearest, "
                           f"but got {interpolation}")
    if q.numel() and q.device.type != 'meta' and not bool(((q >= 0) & (q <= 1)).all()):
        raise RuntimeError(f"{name}() q values must be in the range [0, 1]")


def _quantile_impl(self, q, dim, keepdim, interpolation, ignore_nan):
    name = 'nanquantile' if ignore_nan else 'quantile'
    _quantile_checks(name, self, q, interpolation)
    nd = self.dim()
    if dim is None:
        x = self.reshape(-1)
        out_shape = [1] * nd if keepdim else []
    else:
        d = wrap_dim(dim, nd)
        x = self.movedim(d, -1) if nd else self.reshape(1)
        out_shape = list(self.shape)
        if nd:
            out_shape[d] = 1
            if not keepdim:
                del out_shape[d]
    srt = x.sort(dim=-1).values                              # NaNs sort last
    last = srt.shape[-1] - 1
    qq = q.reshape(-1)
    if ignore_nan:      # rank among the non-NaN values; a row of NaNs reads its first (NaN) value
        count = srt.isnan().logical_not().sum(-1, True)
        ranks = qq * (count - 1).to(self._dtype)
        ranks = ranks.masked_fill(ranks < 0, 0)
    else:               # any NaN makes the row's answer NaN: read the last (NaN) value
        ranks = (qq * last).expand(tuple(srt.shape[:-1]) + (qq.shape[0],))
        ranks = ranks.masked_fill(srt.isnan().any(-1, True), last)
    if interpolation == 'lower':
        ranks = ranks.floor()
    elif interpolation == 'higher':
        ranks = ranks.ceil()
    elif interpolation == 'nearest':
        ranks = ranks.round()
    below = ranks.long()
    vals = srt.gather(-1, below)
    if interpolation in ('linear', 'midpoint'):
        w = ranks - below.to(self._dtype) if interpolation == 'linear' else ranks.detach() * 0 + 0.5
        vals = vals.lerp(srt.gather(-1, ranks.ceil().long()), w)
    # vals: (rows..., nq) -> (nq, *out_shape) or out_shape for a scalar q
    if q.dim() == 0:
        return vals.reshape(out_shape)
    return vals.movedim(-1, 0).reshape([qq.shape[0]] + out_shape)


declare("quantile(Tensor self, Tensor q, int? dim=None, bool keepdim=False, *, str interpolation='linear') -> Tensor",
        composite=lambda self, q, dim=None, keepdim=False, interpolation='linear':
        _quantile_impl(self, q, dim, keepdim, interpolation, False), name='_quantile', function=False, method=False)
declare("nanquantile(Tensor self, Tensor q, int? dim=None, bool keepdim=False, *, str interpolation='linear') -> "
        "Tensor", composite=lambda self, q, dim=None, keepdim=False, interpolation='linear':
        _quantile_impl(self, q, dim, keepdim, interpolation, True), name='_nanquantile', function=False,
        method=False)


# --- logspace -----------------------------------------------------------------------------------

def _logspace_meta(start, end, steps, base=10.0, dtype=None, device=None):
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    return (int(steps),), dtype if dtype is not None else D.get_default_dtype()


declare('logspace(Scalar start, Scalar end, int steps, float base=10.0, *, ScalarType? dtype=None, '
        'Device? device=None) -> Tensor', kind='factory', meta=_logspace_meta, method=False, differentiable=False)
