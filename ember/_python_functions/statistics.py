"""``quantile`` / ``nanquantile``: ``q`` may be a float or a tensor; a float becomes a 0-d tensor of the input's
dtype, as torch's ``quantile.scalar`` overload does."""
from .._tensor import Tensor
from .reductions import _write_out
from ..ops import aten

__all__ = ['quantile', 'nanquantile']


def _q(q, input):
    if isinstance(q, Tensor):
        return q
    from .. import _creation
    if not 0 <= q <= 1:
        raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {q}")
    return _creation.tensor(q, dtype=input.dtype if input.dtype.is_floating_point else None, device=input.device)


def quantile(input, q, dim=None, keepdim=False, *, interpolation='linear', out=None):
    """The ``q``-th quantiles of ``input`` (all of it, or along ``dim``), interpolating as torch does.

    >>> quantile(tensor([1., 2., 3., 4.]), 0.5).item()
    2.5
    """
    res = aten.quantile.default(input, _q(q, input), dim, keepdim, interpolation=interpolation)
    return res if out is None else _write_out(out, res)


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation='linear', out=None):
    """`quantile` ignoring NaNs (NaN only where a row has no other value).

    >>> nanquantile(tensor([1., float('nan'), 3.]), 0.5).item()
    2.0
    """
    res = aten.nanquantile.default(input, _q(q, input), dim, keepdim, interpolation=interpolation)
    return res if out is None else _write_out(out, res)


Tensor.quantile = quantile
Tensor.nanquantile = nanquantile
